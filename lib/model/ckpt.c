/*
 * ckpt.c — checkpoint directories: atomic save, latest link, pruning, loading (see ckpt.h).
 */
#include "ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "safetensors.h"

static int io_fail(const char *path)
{
	return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return io_fail(path);
	int rc = fsync(fd) == 0 ? LLM_OK : io_fail(path);
	close(fd);
	return rc;
}

static int write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return io_fail(path);
	const char *p = data;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int rc = io_fail(path);
			close(fd);
			return rc;
		}
		p += k;
		n -= (size_t)k;
	}
	if (fsync(fd) != 0) {
		int rc = io_fail(path);
		close(fd);
		return rc;
	}
	return close(fd) == 0 ? LLM_OK : io_fail(path);
}

static int read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? llm_fail(LLM_ENOTFOUND, "%s: %s", path, strerror(errno))
		                       : io_fail(path);
	llm_buf b = LLM_BUF_INIT;
	char tmp[65536];
	size_t k;
	while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
		llm_buf_add(&b, tmp, k);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		llm_buf_release(&b);
		return io_fail(path);
	}
	if (!b.p)
		llm_buf_grow(&b, 1);
	*data = llm_buf_detach(&b, len);
	return LLM_OK;
}

/*
 * Remove `name` in the directory `root` without ever following a link: a link or a file is
 * unlinked itself; a directory (a checkpoint: files only, what llm_ckpt_save writes) is
 * opened with O_NOFOLLOW, its entries are unlinked through that descriptor, and it is removed.
 * Whatever a name points to, nothing outside root is touched. A name that is gone is fine.
 */
static int remove_in(const char *root, const char *name)
{
	int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? LLM_OK : io_fail(root);
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/%s", root, name);
	struct stat sb;
	int rc = LLM_OK;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		rc = errno == ENOENT ? LLM_OK : io_fail(p.p);
	} else if (!S_ISDIR(sb.st_mode)) {
		rc = unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? LLM_OK : io_fail(p.p);
	} else {
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d) {
			rc = io_fail(p.p);
			if (fd >= 0)
				close(fd);
		} else {
			struct dirent *e;
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					unlinkat(fd, e->d_name, 0); /* a subdirectory stays: rmdir says so */
			closedir(d);
			if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
				rc = io_fail(p.p);
		}
	}
	close(dfd);
	llm_buf_release(&p);
	return rc;
}

static int mkdir_p(const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, path);
	int rc = LLM_OK;
	for (char *s = b.p + 1;; s++) {
		char c = *s;
		if (c != '/' && c)
			continue;
		*s = 0;
		if (mkdir(b.p, 0755) != 0 && errno != EEXIST) {
			rc = io_fail(b.p);
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	llm_buf_release(&b);
	return rc;
}

static int is_temporary(const char *name)
{
	return name[0] == '.' && strstr(name, ".tmp.");
}

/* Leftover temporary directories of killed writers (one writer per run: llm-train locks). */
static void remove_stale(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (is_temporary(e->d_name))
			remove_in(root, e->d_name);
	closedir(d);
}

static int save_tensors(const char *path, llm_model *m, const float *base, const char *prefix,
                        const float *base2, const char *prefix2)
{
	llm_safetensors_writer *w = llm_safetensors_writer_new();
	llm_safetensors_writer_meta(w, "format", "pt");
	llm_buf name = LLM_BUF_INIT;
	for (int pass = 0; pass < (base2 ? 2 : 1); pass++)
		for (size_t i = 0; i < llm_model_ntensors(m); i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			llm_buf_reset(&name);
			llm_buf_addf(&name, "%s%s", pass ? prefix2 : prefix, t->name);
			llm_safetensors_writer_add(w, name.p, LLM_ST_F32, t->ndim, t->shape,
			                  (pass ? base2 : base) + t->offset);
		}
	int rc = llm_safetensors_writer_write(w, path);
	llm_buf_release(&name);
	llm_safetensors_writer_free(w);
	return rc;
}

int llm_ckpt_save(const char *root, int64_t step, llm_model *m, const float *adam_m,
                  const float *adam_v, const char *state, size_t state_len,
                  const llm_ckpt_file *extra, size_t nextra, char **path)
{
	static const char *const own[] = { "config.json", "model.safetensors",
	                                   "optimizer.safetensors", "state.json" };
	for (size_t i = 0; i < nextra; i++) {
		int bad = !*extra[i].name || strchr(extra[i].name, '/') || extra[i].name[0] == '.';
		for (size_t k = 0; k < sizeof own / sizeof *own; k++)
			bad |= strcmp(extra[i].name, own[k]) == 0;
		if (bad)
			return llm_fail(LLM_EINVAL, "'%s' cannot be a further file of a checkpoint",
			                extra[i].name);
	}
	int rc = mkdir_p(root);
	if (rc)
		return rc;
	remove_stale(root);
	const char *kind = adam_m ? "step" : "model";
	llm_buf tmp = LLM_BUF_INIT, fin = LLM_BUF_INIT, f = LLM_BUF_INIT, cfg = LLM_BUF_INIT;
	char tmpname[96];
	snprintf(tmpname, sizeof tmpname, ".%s-%07lld.tmp.%ld", kind, (long long)step, (long)getpid());
	llm_buf_addf(&tmp, "%s/%s", root, tmpname);
	llm_buf_addf(&fin, "%s/%s-%07lld", root, kind, (long long)step);
	remove_in(root, tmpname);
	if (mkdir(tmp.p, 0755) != 0) {
		rc = io_fail(tmp.p);
		goto out;
	}
	llm_model_config_json(llm_model_get_config(m), &cfg);
	llm_buf_addf(&f, "%s/config.json", tmp.p);
	if ((rc = write_file(f.p, cfg.p, cfg.len)))
		goto fail;
	llm_buf_reset(&f);
	llm_buf_addf(&f, "%s/model.safetensors", tmp.p);
	if ((rc = save_tensors(f.p, m, llm_model_params(m), "", NULL, NULL)))
		goto fail;
	if (adam_m) {
		llm_buf_reset(&f);
		llm_buf_addf(&f, "%s/optimizer.safetensors", tmp.p);
		if ((rc = save_tensors(f.p, m, adam_m, "exp_avg.", adam_v, "exp_avg_sq.")))
			goto fail;
	}
	for (size_t i = 0; i < nextra; i++) {
		llm_buf_reset(&f);
		llm_buf_addf(&f, "%s/%s", tmp.p, extra[i].name);
		if ((rc = write_file(f.p, extra[i].data, extra[i].len)))
			goto fail;
	}
	llm_buf_reset(&f);
	llm_buf_addf(&f, "%s/state.json", tmp.p);
	if ((rc = write_file(f.p, state, state_len)) || (rc = fsync_path(tmp.p)))
		goto fail;
	/* A checkpoint of the same step (after a rollback) is replaced. */
	struct stat sb;
	if (lstat(fin.p, &sb) == 0) {
		char old[96];
		snprintf(old, sizeof old, ".%s-%07lld.old.tmp.%ld", kind, (long long)step, (long)getpid());
		llm_buf_reset(&f);
		llm_buf_addf(&f, "%s/%s", root, old);
		if (rename(fin.p, f.p) != 0) {
			rc = io_fail(fin.p);
			goto fail;
		}
		remove_in(root, old);
	}
	if (rename(tmp.p, fin.p) != 0) {
		rc = io_fail(fin.p);
		goto fail;
	}
	if ((rc = fsync_path(root)))
		goto out;
	if (adam_m) {
		/* latest -> step-N, replaced atomically by a rename over it. */
		llm_buf_reset(&f);
		llm_buf_addf(&f, "%s/.latest.tmp.%ld", root, (long)getpid());
		unlink(f.p);
		const char *base = strrchr(fin.p, '/') + 1;
		llm_buf_reset(&cfg);
		llm_buf_addf(&cfg, "%s/latest", root);
		if (symlink(base, f.p) != 0 || rename(f.p, cfg.p) != 0) {
			rc = io_fail(cfg.p);
			unlink(f.p);
			goto out;
		}
		rc = fsync_path(root);
	}
	if (rc == LLM_OK && path)
		*path = llm_buf_detach(&fin, NULL);
	goto out;
fail:
	remove_in(root, tmpname);
out:
	llm_buf_release(&tmp);
	llm_buf_release(&fin);
	llm_buf_release(&f);
	llm_buf_release(&cfg);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int llm_ckpt_prune(const char *root, int full, int keep)
{
	if (keep <= 0)
		return LLM_OK;
	const char *prefix = full ? "step-" : "model-";
	size_t pl = strlen(prefix);
	DIR *d = opendir(root);
	if (!d)
		return io_fail(root);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, pl) == 0) {
			if (n == cap)
				names = llm_realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
			names[n++] = llm_strdup(e->d_name);
		}
	closedir(d);
	/* Zero-padded step numbers sort by name. */
	qsort(names, n, sizeof *names, cmp_str);
	llm_buf p = LLM_BUF_INIT;
	char latest[256] = "";
	llm_buf_addf(&p, "%s/latest", root);
	ssize_t ll = readlink(p.p, latest, sizeof latest - 1);
	latest[ll > 0 ? ll : 0] = 0;
	int rc = LLM_OK;
	for (size_t i = 0; i + (size_t)keep < n; i++) {
		if (strcmp(names[i], latest) == 0)
			continue;
		int r = remove_in(root, names[i]);
		rc = rc ? rc : r;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	llm_buf_release(&p);
	return rc;
}

static int has(const char *dir, const char *file)
{
	char p[4096];
	if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
		return 0;
	return access(p, F_OK) == 0;
}

int llm_ckpt_clear(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return errno == ENOENT ? LLM_OK : io_fail(root);
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "step-", 5) == 0 || strncmp(e->d_name, "model-", 6) == 0 ||
		    strcmp(e->d_name, "latest") == 0 || is_temporary(e->d_name)) {
			names = llm_realloc(names, (n + 1) * sizeof *names);
			names[n++] = llm_strdup(e->d_name);
		}
	closedir(d);
	int rc = LLM_OK;
	for (size_t i = 0; i < n; i++) {
		int r = remove_in(root, names[i]);
		rc = rc ? rc : r;
		free(names[i]);
	}
	free(names);
	if (!rc && rmdir(root) != 0 && errno != ENOTEMPTY && errno != EEXIST)
		rc = io_fail(root);
	return rc;
}

int llm_ckpt_resolve(const char *path, char **dir)
{
	*dir = NULL;
	const char *tries[] = { "", "/latest", "/ckpt/latest" };
	for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
		char p[4096];
		snprintf(p, sizeof p, "%s%s", path, tries[i]);
		if (has(p, "state.json")) {
			*dir = llm_strdup(p);
			return LLM_OK;
		}
	}
	return llm_fail(LLM_ENOTFOUND, "%s: no checkpoint (state.json, latest or ckpt/latest)", path);
}

int llm_ckpt_read_config(const char *dir, llm_model_config *c)
{
	char p[4096], *data;
	size_t len;
	snprintf(p, sizeof p, "%s/config.json", dir);
	int rc = read_file(p, &data, &len);
	if (rc)
		return rc;
	rc = llm_model_config_parse(c, data, len);
	if (rc)
		rc = llm_fail(rc, "%s: %s", p, llm_last_error());
	free(data);
	return rc;
}

static int load_tensors(const char *path, const llm_model *m, float *base, const char *prefix,
                        float *base2, const char *prefix2)
{
	llm_safetensors *st;
	int rc = llm_safetensors_open(&st, path);
	if (rc)
		return rc;
	char name[128];
	for (int pass = 0; pass < (base2 ? 2 : 1) && !rc; pass++)
		for (size_t i = 0; i < llm_model_ntensors(m) && !rc; i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			snprintf(name, sizeof name, "%s%s", pass ? prefix2 : prefix, t->name);
			rc = llm_safetensors_read_f32(st, name, (pass ? base2 : base) + t->offset, t->ndim,
			                     t->shape);
			if (rc)
				rc = llm_fail(rc, "%s: %s", path, llm_last_error());
		}
	llm_safetensors_free(st);
	return rc;
}

int llm_ckpt_load_model(const char *dir, llm_model *m)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/model.safetensors", dir);
	return load_tensors(p, m, llm_model_params(m), "", NULL, NULL);
}

int llm_ckpt_load_optim(const char *dir, const llm_model *m, float *adam_m, float *adam_v)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/optimizer.safetensors", dir);
	return load_tensors(p, m, adam_m, "exp_avg.", adam_v, "exp_avg_sq.");
}

int llm_ckpt_read_state(const char *dir, char **state, size_t *len)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/state.json", dir);
	return read_file(p, state, len);
}
