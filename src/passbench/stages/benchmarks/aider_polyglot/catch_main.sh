# Catch2's main for an Aider polyglot C++ exercise, from passbench's read-only cache
# (aider_polyglot/catch_main.py says what is cached and why a sample cannot change it).
#
# cmake calls it as the compiler launcher: sh catch_main.sh <compiler> <arguments...>.
# It takes the cached object only for the compile of test/tests-main.cpp, when the compiler
# (`-v`), the arguments, tests-main.cpp and test/catch.hpp are those of a cache entry (its
# name is their sha256) and every other file that compile read is unchanged (the entry's
# headers.sha256); every other compile, and any argument or environment variable that could
# make the compile read another file, runs the compiler unchanged.
# PASSBENCH_CATCH_MAIN_CACHE: the cache (read-only); PASSBENCH_CATCH_MAIN_RECORD: a folder
# where a compile that misses leaves its object for catch_main.py to check and publish.

for variable in CPATH CPLUS_INCLUDE_PATH C_INCLUDE_PATH GCC_EXEC_PREFIX COMPILER_PATH \
    DEPENDENCIES_OUTPUT SUNPRO_DEPENDENCIES; do
  eval "[ -z \"\${$variable:-}\" ]" || exec "$@"
done
compiler=$1
shift
out='' target='' depfile='' input='' flags='' expect='' compile=0
for argument in "$@"; do
  case $expect in
    -o) out=$argument; expect=''; continue ;;
    -MT) target=$argument; expect=''; continue ;;
    -MF) depfile=$argument; expect=''; continue ;;
  esac
  case $argument in
    -o|-MT|-MF) expect=$argument ;;
    -c) compile=1 ;;
    # flags that change no file the compile reads: kept in the key, verbatim
    -D?*|-U?*|-g|-g[0-9]|-O|-O?|-std=*|-MD|-pthread|-fPIC|-fPIE) flags="$flags
$argument" ;;
    -Wp,*|-Wa,*|-Wl,*|-W) exec "$compiler" "$@" ;;
    -W?*) flags="$flags
$argument" ;;
    -*) exec "$compiler" "$@" ;;  # an include folder, a forced include, a spec file...
    *) [ -z "$input" ] || exec "$compiler" "$@"; input=$argument ;;
  esac
done
folder=${input%/*}
case $input in
  */test/tests-main.cpp) ;;
  *) exec "$compiler" "$@" ;;
esac
if [ "$compile" != 1 ] || [ -z "$out" ] || [ -n "$expect" ] || [ ! -f "$folder/catch.hpp" ]; then
  exec "$compiler" "$@"
fi
key=$( { echo "passbench catch-main 1"; "$compiler" -v 2>&1; printf '%s\n' "$flags"
         sha256sum < "$input"; sha256sum < "$folder/catch.hpp"; } | sha256sum)
key=${key%% *}
entry=${PASSBENCH_CATCH_MAIN_CACHE:-/nonexistent}/$key
if [ -f "$entry/main.o" ] && [ -f "$entry/headers.sha256" ] \
    && sha256sum --check --status "$entry/headers.sha256" 2>/dev/null \
    && cp "$entry/main.o" "$out"; then
  if [ -n "$depfile" ]; then
    {
      printf '%s: %s %s' "$target" "$input" "$folder/catch.hpp"
      while read -r _ header; do printf ' \\\n  %s' "$header"; done < "$entry/headers.sha256"
      echo
    } > "$depfile"
  fi
  exit 0
fi
if [ -z "${PASSBENCH_CATCH_MAIN_RECORD:-}" ]; then
  exec "$compiler" "$@"
fi
"$compiler" "$@" || exit
[ -n "$depfile" ] || exit 0
mkdir -p "$PASSBENCH_CATCH_MAIN_RECORD/$key"
cp "$out" "$PASSBENCH_CATCH_MAIN_RECORD/$key/main.o"
cp "$depfile" "$PASSBENCH_CATCH_MAIN_RECORD/$key/main.d"
printf '%s\n' "$input" > "$PASSBENCH_CATCH_MAIN_RECORD/$key/input"
