/* fg_build_info.h -- what the build recorded of its sources: defined in the file that
 * cmake/fg_build_info.cmake generates at every build (build/.../generated/fg_build_info.c). */
#ifndef FG_BUILD_INFO_H
#define FG_BUILD_INFO_H

/* The git commit the library was built from (40 hex digits), or "unknown" outside a checkout. */
extern const char fg_build_commit_text[];
/* 1: tracked files differed from that commit at build time; 0: they did not; -1: unknown. */
extern const int fg_build_dirty_flag;

#endif /* FG_BUILD_INFO_H */
