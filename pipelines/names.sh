#!/bin/sh
# pipelines/names.sh RAW GLOB...: the first raw file under RAW, among those the GLOBs name
# (relative to RAW), that pipelines/Makefile cannot take, as one line saying why; nothing
# when every one is fit.
#
# make splits targets at white space and reads : ; # % $ = \ * ? [ ] ( ) | as its own syntax
# (rule, comment, pattern, variable, wildcard, archive member, order-only): a file with one
# of them in its name would be cut into other names or read as a rule. Every other byte
# (quotes, backquotes, &, <, >, !, non-ASCII) is fit: the recipes quote every name for sh.
# Listed by the shell's globs, not make's, which split such names before they could be seen.
raw=$1
cd "$raw" 2>/dev/null || exit 0
shift
LC_ALL=C
export LC_ALL
for g; do
	for f in $g; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		case $f in
		*[[:space:][:cntrl:]:\;#%\$=\\*?[\]\(\)\|]*)
			shown=$(printf '%s' "$f" | tr '[:cntrl:]' '?')
			printf '%s: %s %s\n' "pipelines/Makefile: $raw/$shown" \
				"make cannot take a file name with white space, a control character" \
				"or one of : ; # % \$ = \\ * ? [ ] ( ) |; rename the file"
			exit 0
			;;
		esac
	done
done
