# Sourced by the reliability scripts. expect_error NAME STATUS SUBSTRING COMMAND...: runs
# COMMAND under an address-space limit of $VMEM_KB and a timeout of $TIMEOUT_S seconds
# (exit status 124: a hang), its output in $work/NAME.{out,err}; it must exit STATUS with
# exactly one stderr line starting "error:" (the "[tandem] ..." device notices aside) that
# holds SUBSTRING. Prints PASS/FAIL and counts failures in $failures.
expect_error() {
  local name=$1 status=$2 want=$3; shift 3
  (ulimit -v "$VMEM_KB"; timeout "$TIMEOUT_S" "$@" >"$work/$name.out" 2>"$work/$name.err")
  local rc=$?
  local errors
  errors=$(grep -v '^\[tandem\]' "$work/$name.err")
  if [ "$rc" -ne "$status" ]; then
    echo "FAIL $name: exit status $rc (want $status)"; sed 's/^/    /' "$work/$name.err" | head -5
    failures=$((failures + 1))
  elif [ "$(printf '%s\n' "$errors" | grep -c .)" -ne 1 ] || [[ "$errors" != error:* ]]; then
    echo "FAIL $name: want one 'error:' line, got:"; printf '%s\n' "$errors" | sed 's/^/    /' | head -5
    failures=$((failures + 1))
  elif [[ "$errors" != *"$want"* ]]; then
    echo "FAIL $name: the message lacks '$want': $errors"; failures=$((failures + 1))
  else
    echo "PASS $name: $errors"
  fi
}
