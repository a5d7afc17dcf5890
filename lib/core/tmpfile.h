/*
 * tmpfile.h — the temporary files every output is written to, and their publishing under the
 * final name: one mechanism for every writer in llmkit (io.h's writers, shards, exports,
 * models).
 *
 * Creating. A temporary is created in the directory of its final path, so that the final
 * rename stays within one file system: anonymous (O_TMPFILE) where the file system allows,
 * else under a hidden name that nobody can predict, ".NAME.llmtmp.XXXXXXXXXXXX" (12 random
 * characters), created with O_CREAT|O_EXCL|O_NOFOLLOW, so that a file or symlink planted there
 * is never followed, written or reused. A named temporary is locked (flock) for as long as its
 * descriptor is open; the first temporary this process creates in a directory also removes
 * the temporaries that dead processes left there (killed by SIGKILL, or a lost machine): the
 * named ones whose lock nobody holds. An anonymous temporary vanishes with its process.
 * A fatal signal's handler removes this process's own (llm_tmpfile_unlink_all).
 *
 * Publishing. llm_tmpfile_publish fsyncs the file and renames it over the final name (an
 * anonymous one is first linked under a hidden name), then fsyncs the directory. With
 * deferred publishing on (llm_tmpfile_defer; every tool but llm-train turns it on in
 * tools/tool.c), publishing only marks the complete, fsynced file ready; llm_tmpfile_commit
 * renames every ready file, in the order they became ready, when the program ends well, and
 * llm_tmpfile_discard_all removes them when it does not. A run that fails therefore leaves
 * every earlier output as it was. LLM_PUBLISH_NOW renames at once even then: for files a
 * program reads back before it ends, or that are parts of a set switched as a whole later
 * (shards in a dataset generation).
 *
 * A deferred file keeps its descriptor (and lock) until the commit: one descriptor per ready
 * output. llm_tmpfile_defer raises the soft limit of descriptors to the hard one; a program
 * with more ready files than that leaves room for (the limit less 256) publishes the further
 * ones at once. Thread safety: any thread may create and publish its own temporaries;
 * llm_tmpfile_unlink_all is async-signal-safe.
 */
#ifndef LLM_TMPFILE_H
#define LLM_TMPFILE_H

#include "buf.h"

typedef struct llm_tmpfile llm_tmpfile;

/* A new temporary file for the final path; writable descriptor from llm_tmpfile_fd.
 * LLM_EIO naming the directory on failure (*t is NULL). Files get mode 0666 minus the umask. */
int llm_tmpfile_open(llm_tmpfile **t, const char *path);
int llm_tmpfile_fd(const llm_tmpfile *t);

enum { LLM_PUBLISH_NOW = 1 };
/* fsync, then rename into place (or mark ready, see above). Frees t, whatever the outcome;
 * on failure the temporary is removed and the detail names the final path. */
int llm_tmpfile_publish(llm_tmpfile *t, unsigned flags);
/* Remove the temporary and free t; t NULL does nothing. */
void llm_tmpfile_discard(llm_tmpfile *t);

/* The directory path's temporaries go to: the part before the last slash, "/" or "."; free(). */
char *llm_tmpfile_dir(const char *path);

/* Remove the temporaries of dead processes in dir (see above); what creating does once. */
void llm_tmpfile_clean(const char *dir);

/* Deferred publishing for this process: on or off (default off). */
void llm_tmpfile_defer(int on);
/* Rename every ready file. The first failure is the detail (LLM_EIO); the other files are
 * still renamed. */
int llm_tmpfile_commit(void);
/* Remove every temporary of this process, ready or still being written; when ready is not
 * NULL, the final names of the ready (complete) ones are appended to it, ", "-separated. */
void llm_tmpfile_discard_all(llm_buf *ready);
/* The same from a signal handler: unlink only, no locks, no allocation. */
void llm_tmpfile_unlink_all(void);

#endif
