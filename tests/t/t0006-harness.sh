#!/bin/sh
test_description='the shell test harness: exact exit codes, prerequisites that skip, the &&-chain check'
. "$(dirname "$0")/../lib.sh"

# A test script of its own, run with the harness; its TAP output is in OUT.
harness() {
	printf '%s\n' "#!/bin/sh" "test_description=inner" ". \"$TOP/tests/lib.sh\"" "$1" test_done \
		>"$TOP/build/trash/inner-$2.sh" &&
	(cd "$TOP/build/trash" && sh "inner-$2.sh") >"$2.out"
}

test_expect_success 'a body with every command chained passes; one that breaks the chain fails' '
	harness "test_expect_success ok \"true && true\"" good &&
	grep "^ok 1 - ok$" good.out &&
	test_must_fail harness "test_expect_success broken \"true
		true\"" bad &&
	grep "^not ok 1 - broken # broken &&-chain$" bad.out
'

test_expect_success 'a test whose prerequisite is missing is skipped, never reported ok' '
	harness "test_expect_success NO_SUCH_THING never \"false\"" skip &&
	grep "^ok 1 - never # skip missing NO_SUCH_THING$" skip.out
'

test_expect_success 'test_must_fail wants the exact code, and a signal is always a failure' '
	test_must_fail --code=3 sh -c "exit 3" &&
	! test_must_fail sh -c "exit 2" 2>/dev/null &&
	! test_must_fail sh -c "kill -9 \$\$" 2>/dev/null
'

# tests/run.sh --one runs one program of the suite; a program that never ends is ended after
# TEST_TIMEOUT seconds and reported as a failure that names it (it blocks on a FIFO that no
# one opens, so it would wait for ever).
test_expect_success 'tests/run.sh ends a program that hangs and names it as failed' '
	mkfifo never && mkdir logs && printf "%s\n" "echo started" "cat $TRASH/never" >hang.sh &&
	TEST_LOGS=$TRASH/logs TEST_TIMEOUT=1 sh "$TOP/tests/run.sh" --one "$TRASH/hang.sh" hang &&
	test "$(cat logs/hang.log.rc)" = 124 &&
	grep "^started$" logs/hang.log &&
	grep "^not ok - hang: still running after TEST_TIMEOUT=1 s" logs/hang.log
'

test_done
