/*
 * tmpfile.c — temporary files, the cleaning of dead processes' ones, and publishing (tmpfile.h).
 *
 * Every temporary of the process is an entry of one list from creation until it is renamed
 * or removed. Entries are appended and reused but never freed, so that a signal handler can
 * walk the list at any moment (llm_tmpfile_unlink_all) without locks; an entry's name is
 * cleared before its string is freed.
 *
 * Why a lock, and why it is enough: a process that dies, however it dies, drops its flock, so
 * a named temporary nobody has locked belongs to nobody alive. The creator locks the file just
 * after creating it; a cleaner that got there first (and removed it) is seen by the creator
 * because the name then no longer leads to its file, and the creator takes another name.
 */
#include "tmpfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "fault.h"

#define TAG ".llmtmp."
#define RAND_LEN 12

struct llm_tmpfile {
	char *volatile name; /* hidden name, NULL while anonymous */
	char *final;
	char *dir;
	int fd;
	int used;
	int ready;
	unsigned long long seq; /* order of readiness */
	llm_tmpfile *volatile next;
};

static llm_tmpfile *volatile head;
static llm_tmpfile *tail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int defer;
static unsigned long long ready_seq;
static size_t nready, ready_max; /* files waiting for the commit, and how many may (fds) */
/* Directories cleaned by this process (device, inode). */
static struct { dev_t dev; ino_t ino; } *cleaned;
static size_t ncleaned;

char *llm_tmpfile_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return llm_strdup(".");
	if (slash == path)
		return llm_strdup("/");
	return llm_strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* An entry for a new temporary (under the lock). */
static llm_tmpfile *entry_get(void)
{
	for (llm_tmpfile *t = head; t; t = t->next)
		if (!t->used) {
			t->used = 1;
			return t;
		}
	llm_tmpfile *t = llm_calloc(1, sizeof *t);
	t->used = 1;
	t->fd = -1;
	if (tail)
		tail->next = t;
	else
		head = t;
	tail = t;
	return t;
}

static void entry_put(llm_tmpfile *t)
{
	pthread_mutex_lock(&lock);
	char *name = t->name;
	t->name = NULL;
	free(name);
	free(t->final);
	free(t->dir);
	t->final = t->dir = NULL;
	t->fd = -1;
	t->ready = 0;
	t->used = 0;
	pthread_mutex_unlock(&lock);
}

/* ".BASE.llmtmp.XXXXXXXXXXXX" beside path: twelve characters of 36, from the kernel's
 * generator (a clock and a counter mixed in should it fail). */
static char *hidden_name(const char *dir, const char *base)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long long counter;
	unsigned char r[RAND_LEN];
	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^
		                       __atomic_add_fetch(&counter, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED);
		for (int i = 0; i < RAND_LEN; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			r[i] = (unsigned char)(x >> 56);
	}
	llm_buf b = LLM_BUF_INIT;
	llm_buf_addf(&b, "%s/.%s" TAG, dir, base);
	for (int i = 0; i < RAND_LEN; i++)
		llm_buf_addc(&b, alnum[r[i] % 36]);
	return llm_buf_detach(&b, NULL);
}

/* Whether name is one of ours: ".X.llmtmp." and RAND_LEN characters of the alphabet. */
static int is_tmp_name(const char *name)
{
	size_t n = strlen(name), t = sizeof TAG - 1;
	if (name[0] != '.' || n < 2 + t + RAND_LEN)
		return 0;
	const char *r = name + n - RAND_LEN;
	if (memcmp(r - t, TAG, t) != 0)
		return 0;
	for (int i = 0; i < RAND_LEN; i++)
		if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9')))
			return 0;
	return 1;
}

/* The name still leads to the open file fd (not a successor planted after a removal). */
static int names_fd(int dirfd, const char *name, int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void llm_tmpfile_clean(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_tmp_name(e->d_name))
			continue;
		/* O_NOFOLLOW: a symlink named like a temporary is not ours, and is left alone */
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    names_fd(dfd, e->d_name, fd))
			unlinkat(dfd, e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

/* Clean dir the first time this process creates a temporary there. */
static void clean_once(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < ncleaned; i++)
		if (cleaned[i].dev == st.st_dev && cleaned[i].ino == st.st_ino) {
			pthread_mutex_unlock(&lock);
			return;
		}
	cleaned = llm_realloc(cleaned, (ncleaned + 1) * sizeof *cleaned);
	cleaned[ncleaned].dev = st.st_dev;
	cleaned[ncleaned].ino = st.st_ino;
	ncleaned++;
	pthread_mutex_unlock(&lock);
	llm_tmpfile_clean(dir);
}

/* Create a named temporary for t, locked; its descriptor, or -1 with errno. */
static int open_named(llm_tmpfile *t, const char *base)
{
	for (int tries = 0; tries < 100; tries++) {
		char *name = hidden_name(t->dir, base);
		int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0) {
			int e = errno;
			free(name);
			if (e == EEXIST)
				continue;
			errno = e;
			return -1;
		}
		pthread_mutex_lock(&lock);
		t->name = name; /* from here a fatal signal removes it */
		pthread_mutex_unlock(&lock);
		/* A file system without locks (ENOLCK, EOPNOTSUPP) keeps the file unlocked: its
		 * cleaners cannot lock it either, so they leave it alone. */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
			if (names_fd(AT_FDCWD, name, fd))
				return fd;
		}
		/* A cleaner locked or removed it between the create and the lock. */
		pthread_mutex_lock(&lock);
		t->name = NULL;
		pthread_mutex_unlock(&lock);
		free(name);
		close(fd);
	}
	errno = EEXIST;
	return -1;
}

int llm_tmpfile_open(llm_tmpfile **out, const char *path)
{
	*out = NULL;
	pthread_mutex_lock(&lock);
	llm_tmpfile *t = entry_get();
	pthread_mutex_unlock(&lock);
	t->final = llm_strdup(path);
	t->dir = llm_tmpfile_dir(path);
	clean_once(t->dir);
	int fd = -1;
#ifdef O_TMPFILE
	/* An anonymous file is named later through /proc/self/fd (linkat): without /proc, a
	 * named temporary from the start. */
	static int have_proc = -1;
	if (have_proc < 0)
		have_proc = access("/proc/self/fd", X_OK) == 0;
	if (have_proc && !llm_fault_knob("no-o-tmpfile"))
		fd = open(t->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#endif
	if (fd < 0)
		fd = open_named(t, base_of(path));
	if (fd < 0) {
		int rc = llm_fail(LLM_EIO, "%s: cannot create a temporary file in %s: %s", path, t->dir,
		                  strerror(errno));
		entry_put(t);
		return rc;
	}
	t->fd = fd;
	*out = t;
	return LLM_OK;
}

int llm_tmpfile_fd(const llm_tmpfile *t) { return t->fd; }

static void dir_sync(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: some file systems refuse directory syncs */
		close(fd);
	}
}

/* Link an anonymous temporary under a hidden name (locked first, so that no cleaner takes it
 * in the moment before the rename). */
static int give_name(llm_tmpfile *t)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", t->fd);
	flock(t->fd, LOCK_EX | LOCK_NB);
	for (int tries = 0; tries < 100; tries++) {
		char *name = hidden_name(t->dir, base_of(t->final));
		if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
			pthread_mutex_lock(&lock);
			t->name = name;
			pthread_mutex_unlock(&lock);
			return LLM_OK;
		}
		int e = errno;
		free(name);
		if (e != EEXIST)
			return llm_fail(LLM_EIO, "%s: cannot name the temporary file: %s", t->final,
			                strerror(e));
	}
	return llm_fail(LLM_EIO, "%s: cannot name the temporary file", t->final);
}

/* The rename into place; the caller syncs the directory. */
static int rename_into_place(llm_tmpfile *t)
{
	int rc = t->name ? LLM_OK : give_name(t);
	if (rc == LLM_OK) {
		llm_fault_point("tmpfile-named");
		if (rename(t->name, t->final) != 0)
			rc = llm_fail(LLM_EIO, "%s: rename: %s", t->final, strerror(errno));
		else { /* the final name holds the file now */
			char *name = t->name;
			t->name = NULL;
			free(name);
		}
	}
	return rc;
}

static void release(llm_tmpfile *t)
{
	char *name = t->name;
	if (name)
		unlink(name);
	if (t->fd >= 0)
		close(t->fd);
	entry_put(t);
}

int llm_tmpfile_publish(llm_tmpfile *t, unsigned flags)
{
	int rc = LLM_OK;
	/* EINVAL: a file system that cannot sync (the data is still written). */
	if (fsync(t->fd) != 0 && errno != EINVAL)
		rc = llm_fail(LLM_EIO, "%s: fsync: %s", t->final, strerror(errno));
	if (rc == LLM_OK && defer && !(flags & LLM_PUBLISH_NOW)) {
		pthread_mutex_lock(&lock);
		int wait = nready < ready_max;
		if (wait) {
			t->ready = 1;
			t->seq = ++ready_seq;
			nready++;
		}
		pthread_mutex_unlock(&lock);
		if (wait)
			return LLM_OK;
	}
	if (rc == LLM_OK && (rc = rename_into_place(t)) == LLM_OK)
		dir_sync(t->dir);
	release(t);
	return rc;
}

void llm_tmpfile_discard(llm_tmpfile *t)
{
	if (t)
		release(t);
}

/* A ready file keeps its descriptor (an anonymous file is nothing else; a named one keeps its
 * lock): the descriptors left free, less a margin for the program's own, bound how many wait.
 * The soft limit is raised to the hard one first. */
void llm_tmpfile_defer(int on)
{
	defer = on;
	struct rlimit rl;
	ready_max = 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t cur = rl.rlim_cur;
			rl.rlim_cur = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				rl.rlim_cur = cur;
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 256 + 64)
			ready_max = (size_t)(rl.rlim_cur - 256);
		else if (rl.rlim_cur == RLIM_INFINITY)
			ready_max = (size_t)1 << 20;
	}
}

static int by_seq(const void *a, const void *b)
{
	unsigned long long x = (*(llm_tmpfile *const *)a)->seq, y = (*(llm_tmpfile *const *)b)->seq;
	return x < y ? -1 : x > y;
}

int llm_tmpfile_commit(void)
{
	pthread_mutex_lock(&lock);
	size_t n = 0;
	for (llm_tmpfile *t = head; t; t = t->next)
		n += t->used && t->ready;
	llm_tmpfile **v = llm_calloc(n ? n : 1, sizeof *v);
	n = 0;
	for (llm_tmpfile *t = head; t; t = t->next)
		if (t->used && t->ready)
			v[n++] = t;
	pthread_mutex_unlock(&lock);
	qsort(v, n, sizeof *v, by_seq);
	int rc = LLM_OK;
	for (size_t i = 0; i < n; i++) {
		llm_fault_point("commit");
		int r = rename_into_place(v[i]);
		if (r != LLM_OK && rc == LLM_OK)
			rc = r;
	}
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(v[j]->dir, v[i]->dir) == 0;
		if (!seen)
			dir_sync(v[i]->dir);
	}
	for (size_t i = 0; i < n; i++)
		release(v[i]);
	pthread_mutex_lock(&lock);
	nready = 0;
	pthread_mutex_unlock(&lock);
	free(v);
	return rc;
}

void llm_tmpfile_discard_all(llm_buf *ready)
{
	for (llm_tmpfile *t = head; t; t = t->next)
		if (t->used) {
			if (ready && t->ready)
				llm_buf_addf(ready, "%s%s", ready->len ? ", " : "", t->final);
			release(t);
		}
	nready = 0;
}

void llm_tmpfile_unlink_all(void)
{
	for (llm_tmpfile *t = head; t; t = t->next) {
		char *name = t->name;
		if (name)
			unlink(name);
	}
}
