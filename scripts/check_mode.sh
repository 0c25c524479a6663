# Sourced by the scripts that either rewrite files or, with --check, only compare
# (scripts/stubs.sh, scripts/format.sh): parses that one flag and finds the project's ruff.
#
#   check_mode "$@"   # sets check=1 for --check, check=0 for no argument; else usage, exit 2
#   ruff_in <python>  # sets ruff to the ruff beside that interpreter, else the one on the PATH

check_mode() {
  check=0
  case "${1:-}" in
    "") ;;
    --check) check=1 ;;
    *) echo "usage: bash $0 [--check]" >&2; exit 2 ;;
  esac
}

ruff_in() {
  ruff=$(dirname "$1")/ruff
  [ -x "$ruff" ] || ruff=ruff
}
