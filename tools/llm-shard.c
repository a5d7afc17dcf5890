/*
 * llm-shard — token streams into checksummed, mmap-able shards (or Megatron, llm.c and raw
 * exports), with a train/val split by document id and per-domain length-quantile truncation;
 * and the tools around shards: --info, --verify, --dump.
 *
 * Input: token streams (llm-tokenize, llm-noise). Output: DIR/manifest.json naming the shards
 * of one generation, DIR/gen-N/train-00000.bin ... (lib/data/shard.h); a new dataset replaces
 * the old one when its manifest is renamed over the old one's, then the old generation is
 * removed. Memory: the shard writer's buffer, 24 bytes per document
 * of the shard being written, one document, and one small sketch per domain. Truncation
 * without --sketches reads the input twice (stdin is spooled to a temporary file first).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fault.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "core/sketch.h"
#include "core/tmpfile.h"
#include "data/shard.h"
#include "tok/bpe.h"
#include "tok/tokstream.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-shard [options] -o dir [file ...]\n"
	"       llm-shard --info file ...\n"
	"       llm-shard --verify file ...\n"
	"       llm-shard --dump [options] file ...\n"
	"\n"
	"Write token streams as shards plus DIR/manifest.json (or export them), or inspect,\n"
	"verify and dump shards and manifests. With no input file, or -, read standard input.\n"
	"\n";

enum {
	OPT_FORMAT = TOOL_OPT_FIRST_PRIVATE, OPT_PREFIX, OPT_SHARD_SIZE, OPT_VAL, OPT_SEED, OPT_EOS,
	OPT_TOKENIZER, OPT_TRUNCATE, OPT_SKETCHES, OPT_INFO, OPT_VERIFY, OPT_DUMP
};

static const struct tool_option cli_options[] = {
	TOOL_COMMON_ARG('o', "DIR", "output directory (created if missing); --dump: output file"),
	TOOL_CHOICE("format", 0, "FMT", OPT_FORMAT, "shards\0megatron\0llmc\0raw\0tokens\0jsonl\0",
	            "shards (default), megatron, llmc, raw; --dump: tokens, jsonl"),
	TOOL_OPTION("prefix", 0, "NAME", OPT_PREFIX,
	            "name files NAME-train-00000.bin (default: train-00000.bin)"),
	TOOL_OPTION("shard-size", 0, "SIZE", OPT_SHARD_SIZE, "bytes per shard (default 1G)"),
	TOOL_OPTION("val-fraction", 0, "F", OPT_VAL,
	            "share of documents in the val split (default 0.01)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "seed of the split hash (default 0)"),
	TOOL_OPTION("eos", 0, "ID", OPT_EOS, "end-of-text id, appended to documents that lack it"),
	TOOL_OPTION("tokenizer", 0, "FILE", OPT_TOKENIZER,
	            "take the end-of-text id from this tokenizer"),
	TOOL_OPTION("truncate-quantile", 0, "Q", OPT_TRUNCATE,
	            "cut each domain's documents at its Q length quantile"),
	TOOL_OPTION("sketches", 0, "FILE", OPT_SKETCHES,
	            "length sketches from llm-tokenize --stats (else a first pass)"),
	TOOL_OPTION("info", 0, NULL, OPT_INFO, "summarise shards and manifests"),
	TOOL_OPTION("verify", 0, NULL, OPT_VERIFY, "check every checksum (exit 1 on any mismatch)"),
	TOOL_OPTION("dump", 0, NULL, OPT_DUMP, "write shards back as a token stream or JSONL"),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };

enum { MODE_WRITE, MODE_INFO, MODE_VERIFY, MODE_DUMP };
enum { FMT_SHARDS = -1 }; /* else an LLM_EXPORT_* */

typedef struct {
	char *name;
	llm_sketch *sketch;     /* lengths seen by the first pass, or loaded */
	uint64_t cut;           /* truncate at this many tokens; 0 = never */
} domain;

/* Where one split's documents go: a shard writer or an export, rotated by size. */
typedef struct {
	int split;
	unsigned index;
	llm_shard_writer *w;
	llm_export *e;
	char *path;
} sink;

struct shard_run {
	const char *dir, *prefix;
	const char *gen;         /* "gen-N" the shards go to; NULL for exports (into dir) */
	int format;
	uint64_t shard_size, seed;
	double val_fraction, quantile;
	uint32_t eos;
	uint64_t tokenizer_id;   /* of --tokenizer, 0 without */
	llm_tok_header h;        /* of the first input */
	int have_header;
	domain *doms;
	size_t ndoms;
	sink sinks[LLM_NSPLITS];
	llm_manifest m;
	llm_run *run;
	llm_json_rec rec;
	llm_buf id, dom;
	int warned_inputs;
};

static domain *find_domain(struct shard_run *r, const char *name)
{
	for (size_t i = 0; i < r->ndoms; i++)
		if (strcmp(r->doms[i].name, name) == 0)
			return &r->doms[i];
	r->doms = llm_realloc(r->doms, (r->ndoms + 1) * sizeof *r->doms);
	domain *d = &r->doms[r->ndoms++];
	d->name = llm_strdup(name);
	d->sketch = NULL;
	d->cut = 0;
	return d;
}

/* The fields of a record's metadata that llm-shard uses. */
typedef struct {
	const char *id, *domain;
	size_t id_len;
	float weight;
} meta_fields;

static void parse_meta(struct shard_run *r, const llm_tok_rec *t, meta_fields *f)
{
	f->id = NULL;
	f->id_len = 0;
	f->domain = "unknown";
	f->weight = 1;
	llm_buf_reset(&r->id);
	llm_buf_reset(&r->dom);
	if (llm_json_parse(&r->rec, t->meta, t->meta_len) != LLM_OK)
		return;
	const llm_json_val *v = llm_json_get(&r->rec, "id");
	if (v && v->type == LLM_JSON_STRING && llm_json_str(v, &r->id) == LLM_OK) {
		f->id = r->id.p ? r->id.p : "";
		f->id_len = r->id.len;
	} else if (v && v->type == LLM_JSON_NUMBER) {
		f->id = v->p;
		f->id_len = v->len;
	}
	if (llm_json_get_str(&r->rec, "domain", &r->dom) == LLM_OK && r->dom.len)
		f->domain = r->dom.p;
	double w;
	if (llm_json_get_num(&r->rec, "weight", &w) == LLM_OK && isfinite(w))
		f->weight = (float)w;
}

/* The first input fixes the header; later ones must agree with it. */
static int check_header(struct shard_run *r, const llm_tokreader *tr)
{
	const llm_tok_header *h = llm_tokreader_header(tr);
	const char *name = llm_tokreader_name(tr);
	if (!r->have_header) {
		if (r->tokenizer_id && h->tokenizer_id && h->tokenizer_id != r->tokenizer_id) {
			llm_error("%s: made with another tokenizer than --tokenizer", name);
			return 1;
		}
		if (r->eos != LLM_SHARD_NO_EOS && r->eos >= h->vocab_size) {
			llm_error("%s: end-of-text id %u is not below the vocab size %u", name, r->eos,
			          h->vocab_size);
			return 1;
		}
		r->h = *h;
		r->have_header = 1;
		return 0;
	}
	if (h->width != r->h.width || h->vocab_size != r->h.vocab_size ||
	    h->tokenizer_id != r->h.tokenizer_id || h->flags != r->h.flags) {
		llm_error("%s: token width, vocab size, tokenizer or noise flag differ from the first input",
		          name);
		return 1;
	}
	return 0;
}

/* The first pass of --truncate-quantile without --sketches: a sketch of lengths per domain. */
static int sketch_pass(struct shard_run *r, const char *path)
{
	llm_tokreader *tr;
	if (llm_tokreader_open(&tr, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_tokreader_set_widen(tr, 0); /* only lengths are needed */
	llm_tok_rec t;
	meta_fields f;
	int st;
	while ((st = llm_tokreader_next(tr, &t)) == LLM_OK) {
		parse_meta(r, &t, &f);
		domain *d = find_domain(r, f.domain);
		if (!d->sketch)
			d->sketch = llm_sketch_new(LLM_SKETCH_ALPHA);
		llm_sketch_add(d->sketch, (double)t.n, 1);
	}
	if (st != LLM_EOF)
		llm_error("%s", llm_last_error());
	llm_tokreader_free(tr);
	return st != LLM_EOF;
}

/* --sketches FILE: the "length_sketches" member of llm-tokenize's --stats JSON. */
static void load_sketches(struct shard_run *r, const char *path)
{
	char *text;
	size_t len, pos;
	if (llm_read_file(path, &text, &len) != LLM_OK)
		die_lib();
	llm_json_val top, map, key, v;
	const char *msg;
	if (llm_json_parse_value(text, len, &top, &pos, &msg) != LLM_OK || top.type != LLM_JSON_OBJECT)
		die("%s: not a JSON object", path);
	map = llm_json_member(&top, LLM_SKETCH_STATS_KEY);
	if (map.type != LLM_JSON_OBJECT)
		die("%s: no \"%s\" object", path, LLM_SKETCH_STATS_KEY);
	size_t it = 0;
	llm_buf name = LLM_BUF_INIT;
	while (llm_json_next(&map, &it, &key, &v) == LLM_OK) {
		llm_buf_reset(&name);
		llm_json_str(&key, &name);
		domain *d = find_domain(r, name.p ? name.p : "");
		llm_sketch_free(d->sketch);
		if (llm_sketch_from_json(&d->sketch, v.p, v.len) != LLM_OK)
			die("%s: domain '%s': %s", path, name.p, llm_last_error());
	}
	llm_buf_release(&name);
	free(text);
}

/* Copy standard input to an unlinked temporary file, read back through /proc/self/fd. */
static char *spool_stdin(const char *dir)
{
	int fd = llm_tmpfd(dir);
	if (fd < 0)
		die_lib();
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("<stdin>: %s", strerror(errno));
		for (ssize_t off = 0; off < n;) {
			ssize_t k = write(fd, buf + off, (size_t)(n - off));
			if (k < 0 && errno != EINTR)
				die("%s: spooling standard input: %s", dir, strerror(errno));
			off += k > 0 ? k : 0;
		}
	}
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "/proc/self/fd/%d", fd);
	return llm_buf_detach(&p, NULL);
}

/* ---- the dataset directory: generations switched by the manifest ---- */

/*
 * DIR/manifest.json is the dataset: it names its shards, all in one generation directory
 * DIR/gen-N. A new dataset is written into a new generation, which no manifest names until
 * its own manifest is renamed over the old one: that one rename switches every shard at
 * once, so a reader sees the old dataset or the new one, whole, at any moment of a run that
 * is killed, fails or runs out of disk. Then the generations the new manifest does not name
 * go, and with them the shards of the flat layout of earlier versions. The directory is
 * locked (flock) while a run writes in it. Removal never follows a link and never leaves
 * DIR: entries are removed by unlinkat relative to the directory they are in.
 */
typedef struct {
	const char *dir;
	int fd;           /* DIR, locked */
	unsigned gen;     /* the generation this run writes */
	char name[32];    /* "gen-N" */
	llm_manifest old; /* the dataset before this run (no shards when none) */
	int old_known;    /* the old manifest was read, or there was none */
} dataset;

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
static void remove_generation(dataset *ds, const char *name)
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
static void remove_unnamed(dataset *ds, unsigned keep, int flat)
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

/* Lock DIR, read the dataset there, clear what interrupted runs left, start a generation. */
static void dataset_open(dataset *ds, const char *dir)
{
	memset(ds, 0, sizeof *ds);
	ds->dir = dir;
	llm_manifest_init(&ds->old);
	ds->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ds->fd < 0)
		die("%s: %s", dir, strerror(errno));
	if (flock(ds->fd, LOCK_EX | LOCK_NB) != 0)
		die("%s: %s", dir, errno == EWOULDBLOCK ? "another llm-shard is writing this dataset"
		                                        : strerror(errno));
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
	if (mkdirat(ds->fd, ds->name, 0777) != 0)
		die("%s/%s: %s", dir, ds->name, strerror(errno));
}

/* A run that failed: its generation goes, the old dataset stays as it was. */
static void dataset_abandon(dataset *ds)
{
	remove_generation(ds, ds->name);
}

/* After the new manifest is in place: the old dataset's files go. */
static void dataset_retire_old(dataset *ds)
{
	remove_unnamed(ds, ds->gen, 1);
}

static void dataset_close(dataset *ds)
{
	llm_manifest_release(&ds->old);
	close(ds->fd); /* and the lock */
}

static char *sink_name(const struct shard_run *r, int split, unsigned index)
{
	llm_buf b = LLM_BUF_INIT;
	const char *sp = llm_split_name(split);
	const char *pre = r->prefix ? r->prefix : "", *sep = r->prefix ? "-" : "";
	switch (r->format) {
	case FMT_SHARDS: llm_buf_addf(&b, "%s%s%s-%05u.bin", pre, sep, sp, index); break;
	case LLM_EXPORT_LLMC: llm_buf_addf(&b, "%s%s%s_%06u.bin", pre, r->prefix ? "_" : "", sp, index); break;
	case LLM_EXPORT_MEGATRON: llm_buf_addf(&b, "%s%s%s", pre, sep, sp); break;
	default: llm_buf_addf(&b, "%s%s%s.bin", pre, sep, sp); break;
	}
	return llm_buf_detach(&b, NULL);
}

static int sink_close(struct shard_run *r, sink *s)
{
	int st = LLM_OK;
	if (s->w) {
		llm_shard_info info;
		st = llm_shard_writer_close(s->w, &info);
		if (st == LLM_OK) {
			char *file = sink_name(r, s->split, s->index);
			llm_buf rel = LLM_BUF_INIT;
			llm_buf_addf(&rel, "%s/%s", r->gen, file);
			struct stat sb;
			llm_manifest_add_shard(&r->m, rel.p, s->split, &info,
			                       stat(s->path, &sb) == 0 ? (uint64_t)sb.st_size : 0);
			llm_run_count(r->run, "shards", 1);
			llm_buf_release(&rel);
			free(file);
			llm_fault_point("shard-closed");
		}
	} else if (s->e) {
		st = llm_export_close(s->e);
		llm_run_count(r->run, "files", 1);
	}
	if (st != LLM_OK)
		llm_error("%s", llm_last_error());
	s->w = NULL;
	s->e = NULL;
	free(s->path);
	s->path = NULL;
	s->index++;
	return st != LLM_OK;
}

/* Open the split's next file when there is none or this document would overflow it. */
static int sink_ready(struct shard_run *r, sink *s, size_t ntok, size_t meta_len)
{
	uint64_t per = r->h.width * ((r->h.flags & LLM_TOK_NOISED) && r->format == FMT_SHARDS ? 2 : 1);
	uint64_t add = (ntok + 1) * per + meta_len + 24;
	if (s->w && llm_shard_writer_docs(s->w) &&
	    llm_shard_writer_bytes(s->w) + add > r->shard_size && sink_close(r, s))
		return 1;
	if (s->e && r->format == LLM_EXPORT_LLMC && llm_export_tokens(s->e) &&
	    (llm_export_bytes(s->e) + add > r->shard_size ||
	     llm_export_tokens(s->e) + ntok + 1 > LLM_EXPORT_LLMC_MAX_TOKENS) && sink_close(r, s))
		return 1;
	if (s->w || s->e)
		return 0;
	char *file = sink_name(r, s->split, s->index);
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/%s%s%s", r->dir, r->gen ? r->gen : "", r->gen ? "/" : "", file);
	free(file);
	s->path = llm_buf_detach(&p, NULL);
	int st;
	if (r->format == FMT_SHARDS) {
		llm_shard_params par = { r->h.width, r->h.vocab_size, r->eos, r->h.tokenizer_id,
			                 !!(r->h.flags & LLM_TOK_NOISED) };
		st = llm_shard_writer_open(&s->w, s->path, &par);
	} else {
		st = llm_export_open(&s->e, r->format, s->path, r->h.vocab_size);
	}
	if (st != LLM_OK)
		die_lib();
	return 0;
}

/* Token n - 1 of a record, from its stored bytes. */
static uint32_t last_token(const llm_tok_header *h, const llm_tok_rec *t, size_t n)
{
	const unsigned char *p = (const unsigned char *)t->raw_tokens + (n - 1) * h->width;
	uint32_t v = 0;
	memcpy(&v, p, h->width); /* little-endian host (tokstream.c checks) */
	return v;
}

/* Tokens go to shards and exports as the stream stores them: the reader does not widen them
 * (shard_one) and nothing here copies them. */
static int add_doc(struct shard_run *r, const llm_tok_rec *t, const meta_fields *f, size_t n,
                   int split, int truncated)
{
	sink *s = &r->sinks[split];
	if (sink_ready(r, s, n, t->meta_len))
		return 1;
	int st;
	if (s->w) {
		llm_shard_doc_in d = { .n = n, .domain = f->domain, .weight = f->weight,
			               .flags = truncated ? LLM_SHARD_DOC_TRUNCATED : 0,
			               .meta = t->meta, .meta_len = t->meta_len,
			               .raw_tokens = t->raw_tokens, .raw_inputs = t->raw_inputs };
		st = llm_shard_writer_add(s->w, &d);
	} else {
		if (t->raw_inputs && !r->warned_inputs++)
			llm_warn("noised inputs are not exported: %s holds one sequence per document",
			         r->format == LLM_EXPORT_MEGATRON ? "megatron" : r->format == LLM_EXPORT_LLMC ? "llmc" : "raw");
		int eos = r->eos != LLM_SHARD_NO_EOS && (n == 0 || last_token(&r->h, t, n) != r->eos);
		st = llm_export_add_raw(s->e, t->raw_tokens, r->h.width, n, eos ? r->eos : LLM_SHARD_NO_EOS);
	}
	if (st != LLM_OK)
		die_lib();
	return 0;
}

static int shard_one(struct shard_run *r, const char *path, const char *name)
{
	llm_tokreader *tr;
	if (llm_tokreader_open(&tr, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	if (check_header(r, tr)) {
		llm_tokreader_free(tr);
		return 1;
	}
	llm_tokreader_set_widen(tr, 0); /* see add_doc */
	llm_run_begin_input(r->run, name, llm_tokreader_size(tr));
	llm_tok_rec t;
	meta_fields f;
	int st, failed = 0;
	while (!failed && (st = llm_tokreader_next(tr, &t)) == LLM_OK) {
		size_t bytes = 8 + t.meta_len + t.n * r->h.width * (t.raw_inputs ? 2 : 1);
		parse_meta(r, &t, &f);
		int dom = llm_run_in(r->run, bytes, f.domain, strlen(f.domain));
		uint64_t key = f.id ? llm_hash64(f.id, f.id_len, r->seed)
		                    : llm_hash64(t.raw_tokens, t.n * r->h.width, r->seed ^ 0x5eed);
		int split = (double)(key >> 11) * 0x1p-53 < r->val_fraction ? LLM_SPLIT_VAL : LLM_SPLIT_TRAIN;
		domain *d = find_domain(r, f.domain);
		size_t n = t.n;
		int truncated = d->cut && n > d->cut;
		if (truncated) {
			n = (size_t)d->cut;
			llm_run_count_domain(r->run, dom, "truncated", 1);
			llm_run_count_domain(r->run, dom, "truncated_tokens", t.n - n);
			llm_run_count(r->run, "truncated", 1);
		}
		failed = add_doc(r, &t, &f, n, split, truncated);
		llm_manifest_domain *md = llm_manifest_domain_get(&r->m, f.domain);
		md->docs[split]++;
		md->tokens[split] += n + (r->eos != LLM_SHARD_NO_EOS && (n == 0 || last_token(&r->h, &t, n) != r->eos));
		md->truncate_at = d->cut;
		if (truncated) {
			md->truncated_docs++;
			md->truncated_tokens += t.n - n;
		}
		if (split == LLM_SPLIT_VAL)
			llm_run_count(r->run, "val", 1);
		llm_run_out(r->run, dom, bytes);
		llm_run_progress(r->run, llm_tokreader_raw_bytes(tr));
	}
	if (!failed && st != LLM_EOF) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_tokreader_free(tr);
	return failed;
}

/* ---- --info, --verify, --dump over shards and manifests ---- */

static int is_shard_file(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, magic, 8);
	close(fd);
	return n == 8 && memcmp(magic, LLM_SHARD_MAGIC, 8) == 0;
}

struct dumper {
	int jsonl;
	const char *output;
	llm_tokwriter *tw;
	llm_writer *jw;
	llm_tok_header h;
	uint32_t *tok, *inp;
	size_t cap;
	llm_buf line;
	llm_json_rec rec;
	llm_json_edit ed;
};

static void put_ids(llm_buf *b, const uint32_t *t, size_t n)
{
	llm_buf_addc(b, '[');
	for (size_t i = 0; i < n; i++)
		llm_buf_addf(b, i ? ", %u" : "%u", t[i]);
	llm_buf_addc(b, ']');
}

static int dump_shard(struct dumper *dp, const llm_shard *s)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	llm_tok_header h;
	llm_tok_header_init(&h, in->vocab_size, in->tokenizer_id,
	                    (in->flags & LLM_SHARD_NOISED) ? LLM_TOK_NOISED : 0);
	h.width = in->width;
	if (!dp->tw && !dp->jw) {
		dp->h = h;
		int st = dp->jsonl ? llm_writer_open(&dp->jw, dp->output)
		                   : llm_tokwriter_open(&dp->tw, dp->output, &h);
		if (st != LLM_OK)
			die_lib();
	} else if (memcmp(&h, &dp->h, sizeof h) != 0) {
		llm_error("%s: token width, vocab size, tokenizer or noise flag differ from the first shard",
		          llm_shard_path(s));
		return 1;
	}
	for (uint64_t i = 0; i < in->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		size_t n = (size_t)d.len - !!(d.flags & LLM_SHARD_DOC_EOS_ADDED);
		if (dp->cap < n + 1) {
			free(dp->tok);
			free(dp->inp);
			dp->cap = n + 1;
			dp->tok = llm_malloc(dp->cap * 4);
			dp->inp = llm_malloc(dp->cap * 4);
		}
		llm_shard_read_tokens(s, d.start, n, dp->tok);
		int noised = llm_shard_read_inputs(s, d.start, n, dp->inp);
		int st;
		if (!dp->jsonl) {
			st = llm_tokwriter_write(dp->tw, d.meta, d.meta_len, dp->tok, noised ? dp->inp : NULL, n);
		} else {
			llm_buf_reset(&dp->line);
			llm_json_edit_reset(&dp->ed);
			llm_buf ids = LLM_BUF_INIT;
			put_ids(&ids, dp->tok, n);
			llm_json_edit_raw(&dp->ed, "tokens", ids.p, ids.len);
			if (noised) {
				llm_buf_reset(&ids);
				put_ids(&ids, dp->inp, n);
				llm_json_edit_raw(&dp->ed, "inputs", ids.p, ids.len);
			}
			llm_buf_release(&ids);
			if (llm_json_parse(&dp->rec, d.meta, d.meta_len) != LLM_OK)
				llm_json_parse(&dp->rec, "{}", 2); /* metadata that is not an object is dropped */
			llm_json_write(&dp->rec, &dp->ed, &dp->line);
			llm_buf_addc(&dp->line, '\n');
			st = llm_writer_write(dp->jw, dp->line.p, dp->line.len);
		}
		if (st != LLM_OK)
			die_lib();
	}
	return 0;
}

/* --info: hand a description over to standard output. */
static void put_stdout(llm_buf *b)
{
	fwrite(b->p, 1, b->len, stdout);
	llm_buf_release(b);
}

/* Apply a mode to one shard file or manifest. */
static int inspect(int mode, const char *path, struct dumper *dp)
{
	/* --dump reads every token anyway: it checks them as --verify does, and never writes
	 * out damaged data. */
	unsigned flags = mode == MODE_INFO ? 0 : LLM_SHARD_VERIFY;
	llm_shard *s;
	if (is_shard_file(path)) {
		if (llm_shard_open(&s, path, flags) != LLM_OK) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		int failed = 0;
		if (mode == MODE_INFO) {
			llm_buf b = LLM_BUF_INIT;
			llm_shard_describe(s, &b);
			put_stdout(&b);
		} else if (mode == MODE_VERIFY)
			printf("%s: ok\n", path);
		else
			failed = dump_shard(dp, s);
		llm_shard_free(s);
		return failed;
	}
	llm_manifest m;
	if (llm_manifest_load(&m, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	int failed = 0;
	if (mode == MODE_INFO) {
		llm_buf b = LLM_BUF_INIT;
		llm_manifest_describe(&m, path, &b);
		put_stdout(&b);
	}
	for (size_t i = 0; mode != MODE_INFO && i < m.nshards; i++) {
		if (llm_shard_open(&s, m.shards[i].path, flags) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		if (llm_manifest_check_shard(&m, &m.shards[i], s) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
		else if (mode == MODE_VERIFY)
			printf("%s: ok\n", m.shards[i].path);
		else
			failed |= dump_shard(dp, s);
		llm_shard_free(s);
	}
	llm_manifest_release(&m);
	return failed;
}

/* The command line beyond what it sets in the run. */
struct args {
	struct tool_common co;
	const char *format, *tokenizer, *sketches;
	int mode;
};

/* --info, --verify, --dump of the files on the command line. */
static int run_inspect(const struct args *a, int argc, char **argv)
{
	int mode = a->mode, jsonl = 0;
	if (a->format && mode == MODE_DUMP)
		jsonl = tool_choice("--format", a->format, "tokens\0jsonl\0");
	else if (a->format)
		usage_error("--format is for writing or --dump");
	if (mode == MODE_DUMP && !jsonl)
		tool_binary_output(a->co.output, "the token stream");
	if (optind == argc)
		usage_error("%s needs shard or manifest files", mode == MODE_INFO ? "--info"
		            : mode == MODE_VERIFY ? "--verify" : "--dump");
	struct dumper dp;
	memset(&dp, 0, sizeof dp);
	dp.jsonl = jsonl;
	dp.output = a->co.output;
	llm_json_rec_init(&dp.rec);
	llm_json_edit_init(&dp.ed);
	int failed = 0;
	for (int i = optind; i < argc; i++)
		failed |= inspect(mode, argv[i], &dp);
	if ((dp.tw && llm_tokwriter_close(dp.tw) != LLM_OK) ||
	    (dp.jw && llm_writer_close(dp.jw) != LLM_OK)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		llm_error("write error on standard output");
		failed = 1;
	}
	free(dp.tok);
	free(dp.inp);
	llm_buf_release(&dp.line);
	llm_json_rec_release(&dp.rec);
	llm_json_edit_release(&dp.ed);
	return failed;
}

static void parse_option(struct args *a, struct shard_run *r, int c, const char *arg)
{
	switch (c) {
	case OPT_FORMAT: a->format = arg; break;
	case OPT_PREFIX: r->prefix = arg; break;
	case OPT_SHARD_SIZE:
		r->shard_size = tool_size("--shard-size", arg);
		if (r->shard_size < 4 * LLM_SHARD_ALIGN)
			usage_error("--shard-size must be at least 16K");
		break;
	case OPT_VAL: r->val_fraction = tool_double("--val-fraction", arg, 0, 1); break;
	case OPT_SEED: r->seed = (uint64_t)tool_int("--seed", arg, 0, INT64_MAX); break;
	case OPT_EOS: r->eos = (uint32_t)tool_int("--eos", arg, 0, UINT32_MAX - 1); break;
	case OPT_TOKENIZER: a->tokenizer = arg; break;
	case OPT_TRUNCATE: r->quantile = tool_double("--truncate-quantile", arg, 0, 1); break;
	case OPT_SKETCHES: a->sketches = arg; break;
	case OPT_INFO: a->mode = MODE_INFO; break;
	case OPT_VERIFY: a->mode = MODE_VERIFY; break;
	case OPT_DUMP: a->mode = MODE_DUMP; break;
	default: tool_bad_option();
	}
}

static void parse_args(struct args *a, struct shard_run *r, int argc, char **argv)
{
	memset(a, 0, sizeof *a);
	tool_common_init(&a->co, &cli);
	a->mode = MODE_WRITE;
	memset(r, 0, sizeof *r);
	r->shard_size = (uint64_t)1 << 30;
	r->val_fraction = 0.01;
	r->eos = LLM_SHARD_NO_EOS;
	llm_json_rec_init(&r->rec); /* before the first pass, which parses metadata too */
	int c;
	while ((c = tool_getopt(&a->co, argc, argv)) != -1)
		parse_option(a, r, c, optarg);
}

/* Check the writing options and make the output directory. */
static void setup_output(const struct args *a, struct shard_run *r)
{
	static const int fmts[] = { FMT_SHARDS, LLM_EXPORT_MEGATRON, LLM_EXPORT_LLMC, LLM_EXPORT_RAW };
	r->format = a->format ? fmts[tool_choice("--format", a->format, "shards\0megatron\0llmc\0raw\0")]
	                      : FMT_SHARDS;
	if (!a->co.output)
		usage_error("-o DIR is required: shards are files in a directory");
	if (a->sketches && r->quantile == 0)
		usage_error("--sketches is only used with --truncate-quantile");
	r->dir = a->co.output;
	if (mkdir(r->dir, 0777) != 0 && errno != EEXIST)
		die("%s: %s", r->dir, strerror(errno));
}

/* --tokenizer: its id for the manifest, and its end-of-text id unless --eos gave one. */
static void take_tokenizer(struct shard_run *r, const char *path)
{
	llm_bpe *bpe;
	if (llm_bpe_load(&bpe, path, NULL, NULL, NULL) != LLM_OK)
		die_lib();
	r->tokenizer_id = llm_bpe_file_id(bpe);
	if (r->eos == LLM_SHARD_NO_EOS) {
		if (llm_bpe_eos(bpe) < 0)
			die("%s: the tokenizer has no end-of-text token; give --eos", path);
		r->eos = (uint32_t)llm_bpe_eos(bpe);
	}
	llm_bpe_free(bpe);
}

/* The input files ("-" when none), standard input spooled to a file when it is read twice. */
typedef struct {
	char **path;
	int n;
	char *spooled; /* the spool's path, or NULL */
} inputs;

static void inputs_open(inputs *in, const struct shard_run *r, int twice, int argc, char **argv)
{
	int nin = argc - optind;
	in->n = nin ? nin : 1;
	in->path = llm_calloc((size_t)in->n, sizeof *in->path);
	in->spooled = NULL;
	for (int i = 0; i < in->n; i++) {
		in->path[i] = nin ? argv[optind + i] : "-";
		/* A pipe cannot be read twice: keep a copy for the first pass. */
		if (twice && strcmp(in->path[i], "-") == 0) {
			if (in->spooled)
				usage_error("standard input given twice");
			in->path[i] = in->spooled = spool_stdin(r->dir);
		}
	}
}

static void inputs_release(inputs *in)
{
	free(in->spooled);
	free(in->path);
}

/* --truncate-quantile: each domain's cut, from --sketches or a first pass over the inputs.
 * Returns 1 if an input failed (reported). */
static int find_cuts(struct shard_run *r, const inputs *in, const char *sketches)
{
	int failed = 0;
	if (sketches)
		load_sketches(r, sketches);
	else
		for (int i = 0; i < in->n; i++)
			failed |= sketch_pass(r, in->path[i]);
	for (size_t i = 0; i < r->ndoms; i++)
		if (r->doms[i].sketch && llm_sketch_count(r->doms[i].sketch))
			r->doms[i].cut = (uint64_t)ceil(llm_sketch_quantile(r->doms[i].sketch, r->quantile));
	return failed;
}

/* Write every input into the splits' sinks; returns 1 on a failure (reported). */
static int write_inputs(struct shard_run *r, const inputs *in)
{
	int failed = 0;
	llm_manifest_init(&r->m);
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		r->sinks[sp].split = sp;
	for (int i = 0; i < in->n; i++)
		failed |= shard_one(r, in->path[i], in->path[i] == in->spooled ? "<stdin>" : in->path[i]);
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		failed |= sink_close(r, &r->sinks[sp]);
	/* An empty input is a stage upstream that died: a dataset of nothing would hide it. */
	if (!failed && llm_run_records_in(r->run) == 0) {
		llm_error("no documents in the input: no %s written",
		          r->format == FMT_SHARDS ? "dataset" : "export");
		failed = 1;
	}
	return failed;
}

/* DIR/manifest.json, with the options that made the dataset; returns 1 on failure (reported). */
static int write_manifest(struct shard_run *r)
{
	r->m.tokenizer_id = r->h.tokenizer_id;
	r->m.vocab_size = r->h.vocab_size;
	r->m.width = r->h.width;
	r->m.eos_id = r->eos;
	r->m.noised = !!(r->h.flags & LLM_TOK_NOISED);
	llm_buf x = LLM_BUF_INIT;
	llm_buf_adds(&x, "\"val_fraction\": ");
	llm_json_put_f64(&x, r->val_fraction);
	llm_buf_addf(&x, ", \"seed\": %llu, \"shard_size\": %llu, \"truncate_quantile\": ",
	             (unsigned long long)r->seed, (unsigned long long)r->shard_size);
	llm_json_put_f64(&x, r->quantile);
	llm_buf_adds(&x, ",\n  \"commands\": [");
	llm_json_put_str(&x, tool_cmdline(), strlen(tool_cmdline()));
	llm_buf_adds(&x, "]");
	r->m.extra = llm_buf_detach(&x, NULL);
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/manifest.json", r->dir);
	int failed = 0;
	if (llm_manifest_write(&r->m, p.p) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_buf_release(&p);
	return failed;
}

/* --stats: each domain's cut. */
static void stats_cuts(struct shard_run *r)
{
	llm_buf x = LLM_BUF_INIT;
	llm_buf_adds(&x, "\"truncate_at\": {");
	for (size_t i = 0; i < r->ndoms; i++) {
		llm_buf_adds(&x, i ? ", " : "");
		llm_json_put_str(&x, r->doms[i].name, strlen(r->doms[i].name));
		llm_buf_addf(&x, ": %llu", (unsigned long long)r->doms[i].cut);
	}
	llm_buf_addc(&x, '}');
	llm_run_stats_extra(r->run, x.p);
	llm_buf_release(&x);
}

static void shard_run_release(struct shard_run *r)
{
	for (size_t i = 0; i < r->ndoms; i++) {
		free(r->doms[i].name);
		llm_sketch_free(r->doms[i].sketch);
	}
	free(r->doms);
	llm_manifest_release(&r->m);
	llm_json_rec_release(&r->rec);
	llm_buf_release(&r->id);
	llm_buf_release(&r->dom);
}

/* Finish the run and, when it succeeded, switch the dataset to the new generation; returns
 * the exit status. */
static int publish(llm_run *run, dataset *ds, int failed)
{
	if (!failed)
		llm_fault_point("shard-generation");
	int rc = tool_run_finish(run, failed);
	if (rc != 0) {
		dataset_abandon(ds); /* the manifest is never published: the old dataset stays */
	} else if (llm_tmpfile_commit() != LLM_OK) {
		/* whether the switch happened or not, the next run clears what no manifest names */
		llm_error("%s", llm_last_error());
		rc = 1;
	} else {
		llm_fault_point("shard-switched");
		dataset_retire_old(ds);
	}
	dataset_close(ds);
	return rc;
}

int main(int argc, char **argv)
{
	tool_init("llm-shard");
	tool_save_cmdline(argc, argv);
	struct args a;
	struct shard_run r;
	parse_args(&a, &r, argc, argv);
	if (a.mode != MODE_WRITE)
		return run_inspect(&a, argc, argv);
	setup_output(&a, &r);
	int shards = r.format == FMT_SHARDS;
	dataset ds;
	if (shards) {
		dataset_open(&ds, r.dir);
		r.gen = ds.name;
	}
	if (a.tokenizer)
		take_tokenizer(&r, a.tokenizer);
	inputs in;
	inputs_open(&in, &r, r.quantile > 0 && !a.sketches, argc, argv);
	int failed = r.quantile > 0 ? find_cuts(&r, &in, a.sketches) : 0;
	r.run = tool_run_new(&a.co);
	failed |= write_inputs(&r, &in);
	if (shards && !failed)
		failed |= write_manifest(&r);
	if (r.quantile > 0)
		stats_cuts(&r);
	shard_run_release(&r);
	inputs_release(&in);
	return shards ? publish(r.run, &ds, failed) : tool_run_finish(r.run, failed);
}
