# Sourced by the CLI tests (cli_test.sh, cli_compaction_test.sh) with their arguments: sets
# `gpuscan` (the binary, $1, as an absolute path: the tests run in a temporary directory)
# and `python`, and moves into a temporary directory holding in/ and out/, removed on exit.
gpuscan=$1
[[ $gpuscan == */* ]] && gpuscan=$(realpath "$gpuscan")
python=/usr/bin/python3
[[ -x $python ]] || python=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir in out
