/*
 * runlog.c — a run directory read back: metrics.jsonl (incrementally), event files, the
 * checkpoints, the configuration, metrics.prom, evaluation results, the trainer's lock.
 */
#include "runlog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ckpt.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "trainlog.h"

/* A line of metrics.jsonl longer than this is skipped (llm-train's are below 2 KiB). */
#define MAX_LINE (16u << 20)

typedef struct {
	char *key;
	size_t len;
	double *v;
} column;

typedef struct {
	char *key;
	double v;
} number;

struct llm_runlog {
	char *dir;
	const char *source;
	/* the curves */
	size_t rows, cap;
	int64_t *step;
	column *cols;
	size_t ncols, colcap, hint;
	llm_runlog_event *ev;
	size_t nev, evcap;
	/* metrics.jsonl as read so far: its identity, the end of its last complete line */
	dev_t dev;
	ino_t ino;
	off_t off;
	uint64_t lineno, bad;
	/* the small files */
	llm_runlog_ckpt *ck;
	size_t nck;
	llm_runlog_eval *evals;
	size_t nevals;
	char **extra;
	size_t nextra;
	llm_runlog_gauge *gauges;
	size_t ngauges;
	char *train, *config;
	number *nums;
	size_t nnums;
	char manifest_hash[17];
	int manifest_ok;
	llm_json_rec rec;
	llm_buf line, key;
};

/* ---- the curves ------------------------------------------------------------------------- */

llm_runlog *llm_runlog_new(void)
{
	llm_runlog *rl = llm_calloc(1, sizeof *rl);
	rl->source = "";
	rl->manifest_ok = -1;
	llm_json_rec_init(&rl->rec);
	return rl;
}

static void grow_rows(llm_runlog *rl)
{
	if (rl->rows < rl->cap)
		return;
	rl->cap = rl->cap ? 2 * rl->cap : 256;
	rl->step = llm_realloc(rl->step, rl->cap * sizeof *rl->step);
	for (size_t c = 0; c < rl->ncols; c++)
		rl->cols[c].v = llm_realloc(rl->cols[c].v, rl->cap * sizeof(double));
}

/* A new row at index i (rows from i on move up), every value NaN. */
static void insert_row(llm_runlog *rl, size_t i, int64_t step)
{
	grow_rows(rl);
	size_t tail = rl->rows - i;
	memmove(rl->step + i + 1, rl->step + i, tail * sizeof *rl->step);
	rl->step[i] = step;
	for (size_t c = 0; c < rl->ncols; c++) {
		memmove(rl->cols[c].v + i + 1, rl->cols[c].v + i, tail * sizeof(double));
		rl->cols[c].v[i] = NAN;
	}
	rl->rows++;
}

/* The first row whose step is >= step. */
static size_t lower_bound(const llm_runlog *rl, int64_t step)
{
	size_t lo = 0, hi = rl->rows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rl->step[mid] < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A step logged again: the rows from it on are dropped, and it starts the last row. */
static void begin_row(llm_runlog *rl, int64_t step)
{
	rl->rows = lower_bound(rl, step);
	insert_row(rl, rl->rows, step);
}

static size_t find_col(llm_runlog *rl, const char *key, size_t len)
{
	/* Lines repeat the order of their keys: the one after the last key found comes next. */
	for (size_t k = 0; k < rl->ncols; k++) {
		size_t c = (rl->hint + 1 + k) % rl->ncols;
		if (rl->cols[c].len == len && memcmp(rl->cols[c].key, key, len) == 0)
			return rl->hint = c;
	}
	if (rl->ncols == rl->colcap) {
		rl->colcap = rl->colcap ? 2 * rl->colcap : 32;
		rl->cols = llm_realloc(rl->cols, rl->colcap * sizeof *rl->cols);
	}
	column *col = &rl->cols[rl->ncols];
	col->key = llm_strndup(key, len);
	col->len = len;
	col->v = llm_malloc((rl->cap ? rl->cap : 1) * sizeof(double));
	for (size_t i = 0; i < rl->rows; i++)
		col->v[i] = NAN;
	return rl->hint = rl->ncols++;
}

static void set_value(llm_runlog *rl, size_t row, const char *key, size_t len, double v)
{
	size_t c = find_col(rl, key, len); /* may move rl->cols */
	rl->cols[c].v[row] = v;
}

void llm_runlog_set(llm_runlog *rl, int64_t step, const char *key, double value)
{
	if (!rl->rows || rl->step[rl->rows - 1] != step)
		begin_row(rl, step);
	set_value(rl, rl->rows - 1, key, strlen(key), isnan(value) ? INFINITY : value);
}

/* For event files, whose scalars of one step may come one by one and in any order of steps:
 * the row of step, made where it belongs when there is none. */
static size_t row_of(llm_runlog *rl, int64_t step)
{
	if (rl->rows && rl->step[rl->rows - 1] == step)
		return rl->rows - 1;
	size_t i = lower_bound(rl, step);
	if (i == rl->rows || rl->step[i] != step)
		insert_row(rl, i, step);
	return i;
}

static void clear_curves(llm_runlog *rl)
{
	rl->rows = 0;
	for (size_t c = 0; c < rl->ncols; c++) {
		free(rl->cols[c].key);
		free(rl->cols[c].v);
	}
	rl->ncols = rl->hint = 0;
	for (size_t i = 0; i < rl->nev; i++) {
		free(rl->ev[i].name);
		free(rl->ev[i].batches);
		free(rl->ev[i].json);
	}
	rl->nev = 0;
}

static int add_event(llm_runlog *rl, int64_t step, const llm_json_val *name, const char *line,
                     size_t len)
{
	llm_buf b = LLM_BUF_INIT;
	if (llm_json_str(name, &b) != LLM_OK) {
		llm_buf_release(&b);
		return llm_fail(LLM_EFORMAT, "\"event\" is not a string");
	}
	if (rl->nev == rl->evcap) {
		rl->evcap = rl->evcap ? 2 * rl->evcap : 16;
		rl->ev = llm_realloc(rl->ev, rl->evcap * sizeof *rl->ev);
	}
	llm_runlog_event *e = &rl->ev[rl->nev++];
	*e = (llm_runlog_event){ .step = step, .loss = NAN, .to_step = -1 };
	e->name = b.p ? llm_buf_detach(&b, NULL) : llm_strdup("");
	e->json = llm_strndup(line, len);
	double x;
	int64_t i;
	if (llm_json_get_num(&rl->rec, "loss", &x) == LLM_OK)
		e->loss = x;
	if (llm_json_get_i64(&rl->rec, "to_step", &i) == LLM_OK)
		e->to_step = i;
	const llm_json_val *bs = llm_json_get(&rl->rec, "batches");
	if (bs && bs->type == LLM_JSON_ARRAY) {
		size_t it = 0, cap = 0;
		llm_json_val k, v;
		while (llm_json_next(bs, &it, &k, &v) == LLM_OK)
			if (llm_json_i64(&v, &i) == LLM_OK && i >= 0) {
				if (e->nbatches == cap)
					e->batches = llm_realloc(e->batches, (cap = cap ? 2 * cap : 4) * 8);
				e->batches[e->nbatches++] = (uint64_t)i;
			}
	}
	return LLM_OK;
}

int llm_runlog_add_line(llm_runlog *rl, const char *line, size_t len)
{
	if (llm_json_parse(&rl->rec, line, len) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "%s at byte %zu", rl->rec.err_msg, rl->rec.err_pos);
	int64_t step;
	if (llm_json_get_i64(&rl->rec, "step", &step) != LLM_OK || step < 0)
		return llm_fail(LLM_EFORMAT, "no \"step\" that is a count");
	const llm_json_val *ev = llm_json_get(&rl->rec, "event");
	if (ev)
		return add_event(rl, step, ev, line, len);
	begin_row(rl, step);
	for (size_t f = 0; f < rl->rec.nfields; f++) {
		const llm_json_field *fd = &rl->rec.fields[f];
		const char *k = fd->key.p + 1;
		size_t kl = fd->key.len - 2;
		double v;
		if (fd->val.type == LLM_JSON_NULL)
			v = INFINITY;
		else if (fd->val.type != LLM_JSON_NUMBER || llm_json_num(&fd->val, &v) != LLM_OK)
			continue; /* strings and objects are not curves */
		if (kl == 4 && memcmp(k, "step", 4) == 0)
			continue;
		if (memchr(k, '\\', kl)) {
			llm_buf_reset(&rl->key);
			llm_json_str(&fd->key, &rl->key);
			k = rl->key.p ? rl->key.p : "", kl = rl->key.len;
		}
		set_value(rl, rl->rows - 1, k, kl, v);
	}
	return LLM_OK;
}

/* ---- metrics.jsonl, read as it grows --------------------------------------------------- */

static void path_of(llm_buf *b, const llm_runlog *rl, const char *name)
{
	llm_buf_reset(b);
	llm_buf_addf(b, "%s/%s", rl->dir, name);
}

/* Whole lines of fd from rl->off on; a last line without its newline waits for the next
 * call. Returns LLM_OK or LLM_EIO. */
static int read_lines(llm_runlog *rl, int fd, const char *path)
{
	char chunk[1 << 16];
	llm_buf *line = &rl->line;
	llm_buf_reset(line);
	off_t pos = rl->off;
	int skipping = 0;
	for (;;) {
		ssize_t k = pread(fd, chunk, sizeof chunk, pos);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		if (k == 0)
			return LLM_OK;
		pos += k;
		const char *p = chunk, *end = chunk + k;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)((nl ? nl : end) - p);
			if (!skipping && line->len + n > MAX_LINE) {
				skipping = 1;
				llm_buf_reset(line);
			}
			if (!skipping)
				llm_buf_add(line, p, n);
			if (!nl)
				break;
			p = nl + 1;
			rl->off = pos - (off_t)(end - p);
			rl->lineno++;
			size_t len = line->len;
			if (len && line->p[len - 1] == '\r')
				len--;
			if (skipping) {
				llm_warn_at(path, rl->lineno, "line over %u MiB skipped", MAX_LINE >> 20);
				rl->bad++;
			} else if (len && llm_runlog_add_line(rl, line->p, len) != LLM_OK) {
				llm_warn_at(path, rl->lineno, "%s", llm_last_error());
				rl->bad++;
			}
			skipping = 0;
			llm_buf_reset(line);
		}
	}
}

/* 1: read (or absent: 0). */
static int read_metrics(llm_runlog *rl, int *found)
{
	llm_buf p = LLM_BUF_INIT;
	path_of(&p, rl, "metrics.jsonl");
	int fd = open(p.p, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	int rc = LLM_OK;
	*found = fd >= 0;
	if (fd < 0) {
		rl->ino = 0;
		rl->off = 0;
		if (errno != ENOENT)
			rc = llm_fail(LLM_EIO, "%s: %s", p.p, strerror(errno));
	} else if (fstat(fd, &sb) != 0) {
		rc = llm_fail(LLM_EIO, "%s: %s", p.p, strerror(errno));
	} else {
		/* Replaced (a resume cuts it into a new file) or shortened: read it again. */
		if (sb.st_dev != rl->dev || sb.st_ino != rl->ino || sb.st_size < rl->off) {
			clear_curves(rl);
			rl->off = 0;
			rl->lineno = 0;
			rl->bad = 0;
			rl->dev = sb.st_dev;
			rl->ino = sb.st_ino;
		}
		rl->source = "metrics.jsonl";
		rc = read_lines(rl, fd, p.p);
	}
	if (fd >= 0)
		close(fd);
	llm_buf_release(&p);
	return rc;
}

/* ---- TensorBoard event files ------------------------------------------------------------ */

static const struct {
	const char *tag, *key;
} aliases[] = {
	{ "Loss/train", "loss" }, { "loss/train", "loss" }, { "train_loss", "loss" },
	{ "Loss/val", "val_loss" }, { "loss/val", "val_loss" }, { "val/loss", "val_loss" },
	{ "eval/loss", "val_loss" }, { "validation/loss", "val_loss" },
	{ "learning_rate", "lr" }, { "LearningRate", "lr" }, { "gradient_norm", "grad_norm" },
	{ "grad_norm/total", "grad_norm" },
};

void llm_runlog_tag_key(const char *tag, size_t len, llm_buf *out)
{
	llm_buf_reset(out);
	if (len > 6 && memcmp(tag, "train/", 6) == 0) {
		tag += 6;
		len -= 6;
	}
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
		if (strlen(aliases[i].tag) == len && memcmp(aliases[i].tag, tag, len) == 0) {
			llm_buf_adds(out, aliases[i].key);
			return;
		}
	for (size_t i = 0; i < len; i++)
		llm_buf_addc(out, tag[i] == '/' ? '_' : tag[i]);
}

static void on_scalar(void *ctx, int64_t step, double wall, const char *tag, size_t len,
                      double value)
{
	llm_runlog *rl = ctx;
	if (step < 0)
		return;
	llm_runlog_tag_key(tag, len, &rl->key);
	size_t row = row_of(rl, step);
	set_value(rl, row, rl->key.p, rl->key.len, isnan(value) ? INFINITY : value);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in rl->dir (or its subdirectory sub) that start with prefix and end with suffix,
 * sorted; NULL-terminated, malloc'd. */
static char **list_dir(const char *dir, const char *prefix, const char *suffix, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t pl = strlen(prefix), sl = strlen(suffix);
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < pl + sl || strncmp(e->d_name, prefix, pl) != 0 ||
		    strcmp(e->d_name + l - sl, suffix) != 0 || e->d_name[0] == '.')
			continue;
		if (*n + 1 >= cap)
			v = llm_realloc(v, (cap = cap ? 2 * cap : 8) * sizeof *v);
		v[(*n)++] = llm_strdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (v)
		qsort(v, *n, sizeof *v, by_name);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int read_events(llm_runlog *rl, int *found)
{
	size_t n;
	char **names = list_dir(rl->dir, "events.out.tfevents.", "", &n);
	*found = n > 0;
	clear_curves(rl);
	int rc = LLM_OK;
	llm_buf p = LLM_BUF_INIT;
	for (size_t i = 0; i < n && !rc; i++) {
		path_of(&p, rl, names[i]);
		FILE *f = fopen(p.p, "rb");
		if (!f) {
			rc = llm_fail(LLM_EIO, "%s: %s", p.p, strerror(errno));
			break;
		}
		if (llm_trainlog_scan(f, on_scalar, rl) < 0)
			rc = llm_fail(LLM_EIO, "%s: %s", p.p, strerror(errno));
		fclose(f);
	}
	rl->source = n ? "TensorBoard event files" : "";
	llm_buf_release(&p);
	free_list(names, n);
	return rc;
}

/* ---- the small files -------------------------------------------------------------------- */

/* A JSON object file, or NULL (absent, unreadable or not an object: warned, except absent). */
static char *read_object(llm_runlog *rl, const char *path, size_t *len)
{
	char *data = NULL;
	size_t n = 0;
	struct stat sb;
	if (stat(path, &sb) != 0)
		return NULL;
	if (llm_read_file(path, &data, &n) != LLM_OK) {
		llm_warn("%s", llm_last_error());
		return NULL;
	}
	if (!data || llm_json_parse(&rl->rec, data, n) != LLM_OK) {
		llm_warn("%s: not a JSON object%s%s", path, data ? ": " : "",
		         data ? rl->rec.err_msg : "");
		free(data);
		return NULL;
	}
	if (len)
		*len = n;
	return data;
}

static void free_nums(llm_runlog *rl)
{
	for (size_t i = 0; i < rl->nnums; i++)
		free(rl->nums[i].key);
	free(rl->nums);
	rl->nums = NULL;
	rl->nnums = 0;
}

void llm_runlog_set_train_num(llm_runlog *rl, const char *key, double value)
{
	for (size_t i = 0; i < rl->nnums; i++)
		if (strcmp(rl->nums[i].key, key) == 0) {
			rl->nums[i].v = value;
			return;
		}
	rl->nums = llm_realloc(rl->nums, (rl->nnums + 1) * sizeof *rl->nums);
	rl->nums[rl->nnums++] = (number){ llm_strdup(key), value };
}

static void read_config(llm_runlog *rl)
{
	llm_buf p = LLM_BUF_INIT, s = LLM_BUF_INIT;
	free(rl->train);
	free(rl->config);
	free_nums(rl);
	rl->manifest_hash[0] = 0;
	rl->manifest_ok = -1;
	path_of(&p, rl, "config.json");
	rl->config = read_object(rl, p.p, NULL);
	path_of(&p, rl, "train.json");
	size_t n;
	rl->train = read_object(rl, p.p, &n);
	if (rl->train && llm_json_parse(&rl->rec, rl->train, n) == LLM_OK) {
		for (size_t f = 0; f < rl->rec.nfields; f++) {
			const llm_json_field *fd = &rl->rec.fields[f];
			double v;
			if (fd->val.type != LLM_JSON_NUMBER || llm_json_num(&fd->val, &v) != LLM_OK)
				continue;
			llm_buf_reset(&s);
			llm_json_str(&fd->key, &s);
			llm_runlog_set_train_num(rl, s.p ? s.p : "", v);
		}
		llm_buf_reset(&s);
		if (llm_json_get_str(&rl->rec, "manifest_hash", &s) == LLM_OK && s.len == 16 &&
		    strspn(s.p, "0123456789abcdef") == 16)
			memcpy(rl->manifest_hash, s.p, 17);
	}
	uint64_t h;
	path_of(&p, rl, "data-manifest.json");
	if (rl->manifest_hash[0] && access(p.p, F_OK) == 0 && llm_hash_file(p.p, &h) == LLM_OK) {
		char hex[17];
		snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
		rl->manifest_ok = strcmp(hex, rl->manifest_hash) == 0;
	}
	llm_buf_release(&p);
	llm_buf_release(&s);
}

static void free_ckpts(llm_runlog *rl)
{
	for (size_t i = 0; i < rl->nck; i++)
		free(rl->ck[i].name);
	free(rl->ck);
	rl->ck = NULL;
	rl->nck = 0;
}

static int by_step(const void *a, const void *b)
{
	const llm_runlog_ckpt *x = a, *y = b;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return y->full - x->full;
}

/* "step-0000600" -> 600 (full), "model-0000600" -> 600 (light); -1 for other names. */
static int64_t ckpt_step(const char *name, int *full)
{
	const char *d = strncmp(name, "step-", 5) == 0 ? name + 5 :
	                strncmp(name, "model-", 6) == 0 ? name + 6 : NULL;
	if (!d || !*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 18)
		return -1;
	*full = name[0] == 's';
	return strtoll(d, NULL, 10);
}

static void read_ckpts(llm_runlog *rl)
{
	free_ckpts(rl);
	llm_buf root = LLM_BUF_INIT, p = LLM_BUF_INIT;
	path_of(&root, rl, "ckpt");
	char latest[256] = "";
	llm_buf_addf(&p, "%s/latest", root.p);
	ssize_t k = readlink(p.p, latest, sizeof latest - 1);
	latest[k > 0 ? k : 0] = 0;
	size_t n;
	char **names = list_dir(root.p, "", "", &n);
	for (size_t i = 0; i < n; i++) {
		int full;
		int64_t step = ckpt_step(names[i], &full);
		struct stat sb;
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%s/%s", root.p, names[i]);
		if (step < 0 || lstat(p.p, &sb) != 0 || !S_ISDIR(sb.st_mode))
			continue;
		llm_runlog_ckpt c = { .name = llm_strdup(names[i]), .step = step, .full = full,
		                      .latest = strcmp(latest, names[i]) == 0, .tokens = -1 };
		DIR *d = opendir(p.p);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			struct stat fs;
			if (fstatat(dirfd(d), e->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(fs.st_mode))
				c.bytes += (uint64_t)fs.st_size;
		}
		if (d)
			closedir(d);
		char *state = NULL;
		size_t len;
		int64_t tokens;
		if (llm_ckpt_read_state(p.p, &state, &len) == LLM_OK && state &&
		    llm_json_parse(&rl->rec, state, len) == LLM_OK &&
		    llm_json_get_i64(&rl->rec, "tokens", &tokens) == LLM_OK)
			c.tokens = tokens;
		free(state);
		rl->ck = llm_realloc(rl->ck, (rl->nck + 1) * sizeof *rl->ck);
		rl->ck[rl->nck++] = c;
	}
	if (rl->nck)
		qsort(rl->ck, rl->nck, sizeof *rl->ck, by_step);
	free_list(names, n);
	llm_buf_release(&root);
	llm_buf_release(&p);
}

static void free_evals(llm_runlog *rl)
{
	for (size_t i = 0; i < rl->nevals; i++) {
		free(rl->evals[i].path);
		free(rl->evals[i].json);
	}
	free(rl->evals);
	rl->evals = NULL;
	rl->nevals = 0;
}

static void read_eval(llm_runlog *rl, const char *path)
{
	size_t len;
	char *json = read_object(rl, path, &len);
	if (!json)
		return;
	rl->evals = llm_realloc(rl->evals, (rl->nevals + 1) * sizeof *rl->evals);
	rl->evals[rl->nevals++] = (llm_runlog_eval){ llm_strdup(path), json, len };
}

static void read_evals(llm_runlog *rl)
{
	free_evals(rl);
	llm_buf d = LLM_BUF_INIT, p = LLM_BUF_INIT;
	path_of(&d, rl, "eval");
	size_t n;
	char **names = list_dir(d.p, "", ".json", &n);
	for (size_t i = 0; i < n; i++) {
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%s/%s", d.p, names[i]);
		read_eval(rl, p.p);
	}
	for (size_t i = 0; i < rl->nextra; i++)
		read_eval(rl, rl->extra[i]);
	free_list(names, n);
	llm_buf_release(&d);
	llm_buf_release(&p);
}

static void free_gauges(llm_runlog *rl)
{
	for (size_t i = 0; i < rl->ngauges; i++)
		free(rl->gauges[i].name);
	free(rl->gauges);
	rl->gauges = NULL;
	rl->ngauges = 0;
}

/* metrics.prom: "NAME VALUE" lines (a name may carry {labels}); comments skipped. */
static void read_prom(llm_runlog *rl)
{
	free_gauges(rl);
	llm_buf p = LLM_BUF_INIT;
	path_of(&p, rl, "metrics.prom");
	char *data = NULL;
	size_t n = 0;
	if (access(p.p, F_OK) == 0 && llm_read_file(p.p, &data, &n) != LLM_OK)
		llm_warn("%s", llm_last_error());
	for (char *s = data, *nl; s && s < data + n; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(data + n - s));
		if (!nl)
			break; /* the file is replaced whole; a torn end is not ours to show */
		*nl = 0;
		char *sp = strrchr(s, ' '), *end;
		if (*s == '#' || !sp || sp == s)
			continue;
		double v = strtod(sp + 1, &end);
		if (end == sp + 1 || *end)
			continue;
		rl->gauges = llm_realloc(rl->gauges, (rl->ngauges + 1) * sizeof *rl->gauges);
		rl->gauges[rl->ngauges++] = (llm_runlog_gauge){ llm_strndup(s, (size_t)(sp - s)), v };
	}
	free(data);
	llm_buf_release(&p);
}

/* ---- open, refresh, free ---------------------------------------------------------------- */

int llm_runlog_refresh(llm_runlog *rl)
{
	int have_jsonl, have_events = 0;
	int rc = read_metrics(rl, &have_jsonl);
	if (!rc && !have_jsonl)
		rc = read_events(rl, &have_events);
	if (rc)
		return rc;
	read_config(rl);
	read_ckpts(rl);
	read_evals(rl);
	read_prom(rl);
	if (!have_jsonl && !have_events && !rl->train)
		return llm_fail(LLM_ENOTFOUND, "%s: no run there (no metrics.jsonl, TensorBoard event "
		                "file or train.json)", rl->dir);
	return LLM_OK;
}

int llm_runlog_open(llm_runlog **out, const char *dir)
{
	*out = NULL;
	struct stat sb;
	if (stat(dir, &sb) != 0)
		return llm_fail(LLM_EIO, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return llm_fail(LLM_EIO, "%s: %s", dir, strerror(ENOTDIR));
	llm_runlog *rl = llm_runlog_new();
	rl->dir = llm_strdup(dir);
	int rc = llm_runlog_refresh(rl);
	if (rc) {
		llm_runlog_free(rl);
		return rc;
	}
	*out = rl;
	return LLM_OK;
}

int llm_runlog_add_eval(llm_runlog *rl, const char *path)
{
	if (access(path, R_OK) != 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	rl->extra = llm_realloc(rl->extra, (rl->nextra + 1) * sizeof *rl->extra);
	rl->extra[rl->nextra++] = llm_strdup(path);
	read_eval(rl, path);
	return LLM_OK;
}

void llm_runlog_free(llm_runlog *rl)
{
	if (!rl)
		return;
	clear_curves(rl);
	free(rl->ev);
	free(rl->step);
	free(rl->cols);
	free_ckpts(rl);
	free_evals(rl);
	free_gauges(rl);
	free_list(rl->extra, rl->nextra);
	free(rl->train);
	free(rl->config);
	free_nums(rl);
	free(rl->dir);
	llm_json_rec_release(&rl->rec);
	llm_buf_release(&rl->line);
	llm_buf_release(&rl->key);
	free(rl);
}

/* ---- accessors -------------------------------------------------------------------------- */

size_t llm_runlog_rows(const llm_runlog *rl) { return rl->rows; }
const int64_t *llm_runlog_steps(const llm_runlog *rl) { return rl->step; }
size_t llm_runlog_ncols(const llm_runlog *rl) { return rl->ncols; }
const char *llm_runlog_colname(const llm_runlog *rl, size_t i) { return rl->cols[i].key; }
size_t llm_runlog_nevents(const llm_runlog *rl) { return rl->nev; }
const llm_runlog_event *llm_runlog_event_at(const llm_runlog *rl, size_t i) { return &rl->ev[i]; }
size_t llm_runlog_nckpts(const llm_runlog *rl) { return rl->nck; }
const llm_runlog_ckpt *llm_runlog_ckpt_at(const llm_runlog *rl, size_t i) { return &rl->ck[i]; }
size_t llm_runlog_nevals(const llm_runlog *rl) { return rl->nevals; }
const llm_runlog_eval *llm_runlog_eval_at(const llm_runlog *rl, size_t i) { return &rl->evals[i]; }
size_t llm_runlog_ngauges(const llm_runlog *rl) { return rl->ngauges; }
const llm_runlog_gauge *llm_runlog_gauge_at(const llm_runlog *rl, size_t i) { return &rl->gauges[i]; }
const char *llm_runlog_dir(const llm_runlog *rl) { return rl->dir ? rl->dir : ""; }
const char *llm_runlog_source(const llm_runlog *rl) { return rl->source; }
uint64_t llm_runlog_bad_lines(const llm_runlog *rl) { return rl->bad; }
const char *llm_runlog_train_json(const llm_runlog *rl) { return rl->train; }
const char *llm_runlog_config_json(const llm_runlog *rl) { return rl->config; }

const double *llm_runlog_col(const llm_runlog *rl, const char *key)
{
	for (size_t c = 0; c < rl->ncols; c++)
		if (strcmp(rl->cols[c].key, key) == 0)
			return rl->rows ? rl->cols[c].v : NULL;
	return NULL;
}

double llm_runlog_train_num(const llm_runlog *rl, const char *key)
{
	for (size_t i = 0; i < rl->nnums; i++)
		if (strcmp(rl->nums[i].key, key) == 0)
			return rl->nums[i].v;
	return NAN;
}

const char *llm_runlog_manifest_hash(const llm_runlog *rl, int *copy_matches)
{
	if (copy_matches)
		*copy_matches = rl->manifest_ok;
	return rl->manifest_hash;
}

/* ---- is a trainer there ----------------------------------------------------------------- */

/* /proc/locks names each lock's file as MAJOR:MINOR:INODE (hex, hex, decimal): 1 when one
 * is on this file, 0 when none is, -1 when it cannot be read. */
static int proc_locked(const struct stat *sb)
{
	FILE *f = fopen("/proc/locks", "r");
	if (!f)
		return -1;
	char line[512];
	int held = 0;
	while (!held && fgets(line, sizeof line, f)) {
		if (!strstr(line, "FLOCK"))
			continue;
		for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n")) {
			unsigned maj, min;
			unsigned long long ino;
			char end;
			if (sscanf(t, "%x:%x:%llu%c", &maj, &min, &ino, &end) == 3 &&
			    maj == major(sb->st_dev) && min == minor(sb->st_dev) &&
			    ino == (unsigned long long)sb->st_ino)
				held = 1;
		}
	}
	fclose(f);
	return held;
}

int llm_runlog_live(const char *dir, char *holder, size_t cap)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/train.lock", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (holder && cap)
		holder[0] = 0;
	if (fd < 0)
		return 0;
	struct stat sb;
	int held = fstat(fd, &sb) == 0 ? proc_locked(&sb) : -1;
	if (held != 1) {
		/* Not seen here: it may be held on another machine (NFS emulates flock with
		 * byte-range locks the server sees), or procfs is missing. A lock that is taken is
		 * dropped at once; a trainer starting in that instant would be told the directory
		 * is in use, which is why /proc/locks comes first. */
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
			held = 0;
		} else {
			held = errno == EWOULDBLOCK;
		}
	}
	if (held && holder && cap) {
		ssize_t k = pread(fd, holder, cap - 1, 0);
		holder[k > 0 ? k : 0] = 0;
		holder[strcspn(holder, "\n")] = 0;
	}
	close(fd);
	return held;
}
