# tests/man-examples.awk — the checked examples of a man page's EXAMPLES section.
#
# A checked example is a literal display (.Bd -literal ... .Ed) whose commands start with
# "$ " (a trailing backslash continues one on the next line); the lines after a command, up
# to the next command or the end of the display, are what it prints (stdout and stderr). A
# display without "$ " is prose and is not run. For display N this writes DIR/N.sh (the
# commands, in order) and DIR/N.expected (their output), and prints N and the display's
# first command, tab-separated, for the test's name. mdoc escapes are read as a reader sees
# them: \e is a backslash, \& nothing, \- a minus.
#
# Usage: awk -v dir=DIR -f tests/man-examples.awk PAGE.1
function unescape(s) {
	gsub(/\\&/, "", s)
	gsub(/\\-/, "-", s)
	gsub(/\\e/, "\\", s)
	return s
}
/^\.Sh / { inex = ($2 == "EXAMPLES"); next }
!inex { next }
/^\.Bd -literal/ { inbd = 1; n++; ncmd = 0; cont = 0; first = ""; next }
/^\.Ed/ {
	if (inbd && ncmd)
		printf "%d\t%s\n", n, first
	inbd = 0
	next
}
!inbd { next }
{
	line = unescape($0)
	if (cont) {
		print line >> (dir "/" n ".sh")
		cont = line ~ /\\$/
		next
	}
	if (substr(line, 1, 2) == "$ ") {
		ncmd++
		cmd = substr(line, 3)
		if (first == "")
			first = cmd
		if (ncmd == 1) {
			printf "" > (dir "/" n ".sh")
			printf "" > (dir "/" n ".expected")
		}
		print cmd >> (dir "/" n ".sh")
		cont = cmd ~ /\\$/
		next
	}
	if (ncmd)
		print line >> (dir "/" n ".expected")
}
