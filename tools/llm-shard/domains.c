/*
 * domains.c — llm-shard's view of a document's metadata (id, domain, weight), the domains
 * and their --truncate-quantile cuts, and the inputs, standard input spooled when the first
 * pass of truncation reads it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm-shard.h"
#include "core/io.h"

shard_domain *shard_find_domain(struct shard_run *r, const char *name)
{
	for (size_t i = 0; i < r->ndoms; i++)
		if (strcmp(r->doms[i].name, name) == 0)
			return &r->doms[i];
	r->doms = llm_realloc(r->doms, (r->ndoms + 1) * sizeof *r->doms);
	shard_domain *d = &r->doms[r->ndoms++];
	d->name = llm_strdup(name);
	d->sketch = NULL;
	d->cut = 0;
	return d;
}

void shard_parse_meta(struct shard_run *r, const llm_tok_rec *t, shard_meta *f)
{
	f->id = NULL;
	f->id_len = 0;
	f->domain = "unknown";
	f->weight = 1;
	f->parsed = 0;
	f->bad = f->why = NULL;
	llm_buf_reset(&r->id);
	llm_buf_reset(&r->dom);
	if (llm_json_parse(&r->rec, t->meta, t->meta_len) != LLM_OK) {
		/* No metadata is a document without fields; metadata that is not an object is a
		 * record llm-tokenize or llm-noise would never have written. */
		if (t->meta_len) {
			f->bad = "bad_meta";
			f->why = "metadata is not a JSON object";
		}
		return;
	}
	f->parsed = 1;
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
	/* A weight that is not a number would have been sampled as 1: the document would
	 * count for what its author did not mean. */
	double w;
	const llm_json_val *wv = llm_json_get(&r->rec, "weight");
	if (!wv || wv->type == LLM_JSON_NULL)
		return;
	if (llm_json_get_num(&r->rec, "weight", &w) != LLM_OK || !isfinite((float)w)) {
		f->bad = "bad_weight";
		f->why = "\"weight\" is not a finite number";
		return;
	}
	f->weight = (float)w;
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
	shard_meta f;
	int st;
	while ((st = llm_tokreader_next(tr, &t)) == LLM_OK) {
		shard_parse_meta(r, &t, &f);
		if (f.bad)
			continue; /* rejected by the second pass, never written */
		shard_domain *d = shard_find_domain(r, f.domain);
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
		shard_domain *d = shard_find_domain(r, name.p ? name.p : "");
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

void shard_inputs_open(shard_inputs *in, const struct shard_run *r, int twice, int argc, char **argv)
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

void shard_inputs_release(shard_inputs *in)
{
	free(in->spooled);
	free(in->path);
}

/* --truncate-quantile: each domain's cut, from --sketches or a first pass over the inputs.
 * Returns 1 if an input failed (reported). */
int shard_find_cuts(struct shard_run *r, const shard_inputs *in, const char *sketches)
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

/* --stats: each domain's cut. */
void shard_stats_cuts(struct shard_run *r)
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
