# fg_build_info.cmake -- run at BUILD time (cmake -P), by the fg_build_info target, every build:
#   cmake -DSRC=<source dir> -DGIT=<git program or empty> -DOUT=<generated .c> -P fg_build_info.cmake
# Writes OUT with the commit the sources are at and whether tracked files differ from it, and
# rewrites it only when that changed, so an unchanged tree rebuilds nothing and a new commit
# rebuilds one object and relinks. Outside a git checkout (a tarball, no git) the commit is
# "unknown". SRC must itself hold .git: a tarball unpacked inside another repository does not
# take that repository's commit.
set(commit "unknown")
set(dirty -1)
if(GIT AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT}" -C "${SRC}" rev-parse --verify -q HEAD
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND out MATCHES "^[0-9a-f]+$")
    set(commit "${out}")
    # --no-optional-locks: never take the index lock a git command of the user's may hold
    execute_process(COMMAND "${GIT}" --no-optional-locks -C "${SRC}" status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0)
      if(out STREQUAL "")
        set(dirty 0)
      else()
        set(dirty 1)
      endif()
    endif()
  endif()
endif()
set(text "/* generated at build time by cmake/fg_build_info.cmake: do not edit */
#include \"core/fg_build_info.h\"
const char fg_build_commit_text[] = \"${commit}\";
const int fg_build_dirty_flag = ${dirty};
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
