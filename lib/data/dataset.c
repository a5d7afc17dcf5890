/*
 * dataset.c — the dataset directory and its generations (see dataset.h).
 */
#include "dataset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/fault.h"

/* "gen-N" with N a positive decimal number. */
static unsigned generation_of(const char *name)
{
	if (strncmp(name, "gen-", 4) != 0 || !name[4] || strspn(name + 4, "0123456789") != strlen(name + 4) ||
	    strlen(name + 4) > 9)
		return 0;
	return (unsigned)strtoul(name + 4, NULL, 10);
}

/* The generation the manifest's shards are in (0: none, or not one of ours). */
static unsigned manifest_generation(const llm_manifest *m)
{
	unsigned g = 0;
	for (size_t i = 0; i < m->nshards; i++) {
		const char *slash = strchr(m->shards[i].file, '/');
		char head[32];
		if (!slash || (size_t)(slash - m->shards[i].file) >= sizeof head)
			return 0;
		memcpy(head, m->shards[i].file, (size_t)(slash - m->shards[i].file));
		head[slash - m->shards[i].file] = 0;
		unsigned x = generation_of(head);
		if (!x || (g && x != g))
			return 0;
		g = x;
	}
	return g;
}

static int is_shard_file_at(int dirfd, const char *name)
{
	char magic[8];
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, magic, 8) == 8 &&
	         memcmp(magic, LLM_SHARD_MAGIC, 8) == 0;
	close(fd);
	return ok;
}

/* Remove generation directory `name` of DIR: its files, then itself. A subdirectory in it
 * (not ours) keeps it, with a warning. */
static void remove_generation(llm_dataset *ds, const char *name)
{
	int fd = openat(ds->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
			llm_fault_point("shard-cleanup");
			unlinkat(fd, e->d_name, 0);
		}
	}
	closedir(d);
	if (unlinkat(ds->fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		llm_warn("%s/%s: not removed: %s", ds->dir, name, strerror(errno));
}

/* "[PREFIX-](train|val)-NNNNN.bin": a shard name of the flat layout. */
static int flat_shard_name(const char *name)
{
	size_t n = strlen(name);
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		size_t k = strlen(llm_split_name(sp)) + sizeof "-00000.bin" - 1;
		const char *t = name + n - k;
		if (n >= k && (t == name || t[-1] == '-') &&
		    strncmp(t, llm_split_name(sp), strlen(llm_split_name(sp))) == 0 &&
		    t[k - 10] == '-' && strspn(t + k - 9, "0123456789") == 5 && strcmp(t + k - 4, ".bin") == 0)
			return 1;
	}
	return 0;
}

/* Remove what no manifest names any more: every generation but keep (0: all), and, when
 * flat, the shards of the flat layout (those the old manifest listed, or named like them). */
static void remove_unnamed(llm_dataset *ds, unsigned keep, int flat)
{
	int fd = openat(ds->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* names first: removing while reading a directory may skip entries */
	llm_buf names = LLM_BUF_INIT;
	struct dirent *e;
	while ((e = readdir(d)))
		llm_buf_add(&names, e->d_name, strlen(e->d_name) + 1);
	closedir(d);
	for (size_t at = 0; at < names.len; at += strlen(names.p + at) + 1) {
		const char *name = names.p + at;
		unsigned g = generation_of(name);
		int listed = 0;
		for (size_t i = 0; flat && i < ds->old.nshards && !listed; i++)
			listed = strcmp(ds->old.shards[i].file, name) == 0;
		if (g && g != keep)
			remove_generation(ds, name);
		else if (flat && (listed || flat_shard_name(name)) && is_shard_file_at(ds->fd, name)) {
			llm_fault_point("shard-cleanup");
			unlinkat(ds->fd, name, 0);
		}
	}
	llm_buf_release(&names);
}

void llm_dataset_close(llm_dataset *ds)
{
	llm_manifest_release(&ds->old);
	close(ds->fd); /* and the lock */
}

int llm_dataset_open(llm_dataset *ds, const char *dir)
{
	memset(ds, 0, sizeof *ds);
	ds->dir = dir;
	llm_manifest_init(&ds->old);
	ds->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ds->fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", dir, strerror(errno));
	if (flock(ds->fd, LOCK_EX | LOCK_NB) != 0) {
		int busy = errno == EWOULDBLOCK;
		int st = llm_fail(LLM_EIO, "%s: %s", dir, busy ? "another llm-shard is writing this dataset"
		                                               : strerror(errno));
		close(ds->fd);
		return st;
	}
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/manifest.json", dir);
	struct stat st;
	unsigned current = 0;
	if (fstatat(ds->fd, "manifest.json", &st, 0) != 0) {
		ds->old_known = 1;
	} else if (llm_manifest_load(&ds->old, p.p) == LLM_OK) {
		ds->old_known = 1;
		current = manifest_generation(&ds->old);
	} else {
		llm_warn("%s: not read (%s): old generations are kept", p.p, llm_last_error());
	}
	llm_buf_release(&p);
	/* Generations nobody names are those of runs that did not finish. */
	if (ds->old_known)
		remove_unnamed(ds, current ? current : UINT32_MAX, 0);
	unsigned top = current;
	int fd = openat(ds->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (generation_of(e->d_name) > top)
			top = generation_of(e->d_name);
	if (d)
		closedir(d);
	ds->gen = top + 1;
	snprintf(ds->name, sizeof ds->name, "gen-%u", ds->gen);
	if (mkdirat(ds->fd, ds->name, 0777) != 0) {
		int rc = llm_fail(LLM_EIO, "%s/%s: %s", dir, ds->name, strerror(errno));
		llm_dataset_close(ds);
		return rc;
	}
	return LLM_OK;
}

/* A run that failed: its generation goes, the old dataset stays as it was. */
void llm_dataset_abandon(llm_dataset *ds)
{
	remove_generation(ds, ds->name);
}

/* After the new manifest is in place: the old dataset's files go. */
void llm_dataset_retire_old(llm_dataset *ds)
{
	remove_unnamed(ds, ds->gen, 1);
}
