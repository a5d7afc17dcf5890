/*
 * manifest.c — manifest.json, the list of a dataset's shards: writing, reading with every
 * check, describing (see shard.h).
 */
#include "shard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "core/tmpfile.h"

void llm_manifest_describe(const llm_manifest *m, const char *path, llm_buf *out)
{
	llm_buf_addf(out, "%s: %zu shards, vocab %u, %u-byte tokens, tokenizer %016llx, noised inputs %s\n",
	             path, m->nshards, m->vocab_size, m->width, (unsigned long long)m->tokenizer_id,
	             m->noised ? "yes" : "no");
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		uint64_t n = 0, d = 0, t = 0;
		for (size_t i = 0; i < m->nshards; i++)
			if (m->shards[i].split == sp) {
				n++;
				d += m->shards[i].docs;
				t += m->shards[i].tokens;
			}
		llm_buf_addf(out, "  %s: %llu shards, %llu documents, %llu tokens\n", llm_split_name(sp),
		             (unsigned long long)n, (unsigned long long)d, (unsigned long long)t);
	}
	for (size_t i = 0; i < m->ndomains; i++) {
		const llm_manifest_domain *d = &m->domains[i];
		llm_buf_addf(out, "  domain %s: train %llu documents %llu tokens, val %llu documents %llu tokens",
		             d->name, (unsigned long long)d->docs[0], (unsigned long long)d->tokens[0],
		             (unsigned long long)d->docs[1], (unsigned long long)d->tokens[1]);
		if (d->truncate_at)
			llm_buf_addf(out, ", cut at %llu tokens: %llu documents, %llu tokens removed",
			             (unsigned long long)d->truncate_at, (unsigned long long)d->truncated_docs,
			             (unsigned long long)d->truncated_tokens);
		llm_buf_addc(out, '\n');
	}
	for (size_t i = 0; i < m->nshards; i++)
		llm_buf_addf(out, "  %s %s: %llu documents, %llu tokens, %llu bytes\n",
		             llm_split_name(m->shards[i].split), m->shards[i].file,
		             (unsigned long long)m->shards[i].docs, (unsigned long long)m->shards[i].tokens,
		             (unsigned long long)m->shards[i].bytes);
}

/* ---- manifest ---- */

void llm_manifest_init(llm_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->eos_id = LLM_SHARD_NO_EOS;
}

void llm_manifest_release(llm_manifest *m)
{
	for (size_t i = 0; i < m->nshards; i++) {
		free(m->shards[i].file);
		free(m->shards[i].path);
	}
	for (size_t i = 0; i < m->ndomains; i++)
		free(m->domains[i].name);
	free(m->shards);
	free(m->domains);
	free(m->extra);
	memset(m, 0, sizeof *m);
}

void llm_manifest_add_shard(llm_manifest *m, const char *file, int split,
                            const llm_shard_info *info, uint64_t bytes)
{
	m->shards = llm_realloc(m->shards, (m->nshards + 1) * sizeof *m->shards);
	llm_manifest_shard *sh = &m->shards[m->nshards++];
	memset(sh, 0, sizeof *sh);
	sh->file = llm_strdup(file);
	sh->path = llm_strdup(file);
	sh->split = split;
	sh->docs = info->docs;
	sh->tokens = info->tokens;
	sh->bytes = bytes;
	sh->info = *info;
}

llm_manifest_domain *llm_manifest_domain_get(llm_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->ndomains; i++)
		if (strcmp(m->domains[i].name, name) == 0)
			return &m->domains[i];
	m->domains = llm_realloc(m->domains, (m->ndomains + 1) * sizeof *m->domains);
	llm_manifest_domain *d = &m->domains[m->ndomains++];
	memset(d, 0, sizeof *d);
	d->name = llm_strdup(name);
	return d;
}

static void put_hex(llm_buf *b, uint64_t x)
{
	llm_buf_addf(b, "\"%016llx\"", (unsigned long long)x);
}

int llm_manifest_write(const llm_manifest *m, const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\n  \"format\": \"llmkit-shards\",\n  \"version\": 1,\n  \"tokenizer_id\": ");
	put_hex(&b, m->tokenizer_id);
	llm_buf_addf(&b, ",\n  \"vocab_size\": %u,\n  \"token_width\": %u,\n  \"eos_id\": ",
	             m->vocab_size, m->width);
	if (m->eos_id == LLM_SHARD_NO_EOS)
		llm_buf_adds(&b, "null");
	else
		llm_buf_addf(&b, "%u", m->eos_id);
	llm_buf_addf(&b, ",\n  \"noised\": %s,\n  \"shards\": [", m->noised ? "true" : "false");
	uint64_t sd[LLM_NSPLITS] = { 0 }, stok[LLM_NSPLITS] = { 0 };
	for (size_t i = 0; i < m->nshards; i++) {
		const llm_manifest_shard *sh = &m->shards[i];
		sd[sh->split] += sh->docs;
		stok[sh->split] += sh->tokens;
		llm_buf_adds(&b, i ? ",\n    {\"file\": " : "\n    {\"file\": ");
		llm_json_put_str(&b, sh->file, strlen(sh->file));
		llm_buf_addf(&b, ", \"split\": \"%s\", \"documents\": %llu, \"tokens\": %llu, "
		             "\"bytes\": %llu, \"header_checksum\": ", llm_split_name(sh->split),
		             (unsigned long long)sh->docs, (unsigned long long)sh->tokens,
		             (unsigned long long)sh->bytes);
		put_hex(&b, sh->info.header_checksum);
		llm_buf_adds(&b, ", \"checksums\": {");
		for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
			llm_buf_addf(&b, "%s\"%s\": ", k > 1 ? ", " : "", llm_shard_section_name(k));
			put_hex(&b, sh->info.sec[k].checksum);
		}
		llm_buf_adds(&b, "}}");
	}
	llm_buf_adds(&b, m->nshards ? "\n  ],\n  \"splits\": {" : "],\n  \"splits\": {");
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		llm_buf_addf(&b, "%s\"%s\": {\"documents\": %llu, \"tokens\": %llu}", sp ? ", " : "",
		             llm_split_name(sp), (unsigned long long)sd[sp],
		             (unsigned long long)stok[sp]);
	llm_buf_adds(&b, "},\n  \"domains\": {");
	for (size_t i = 0; i < m->ndomains; i++) {
		const llm_manifest_domain *d = &m->domains[i];
		llm_buf_adds(&b, i ? ",\n    " : "\n    ");
		llm_json_put_str(&b, d->name, strlen(d->name));
		llm_buf_addf(&b, ": {\"train_documents\": %llu, \"train_tokens\": %llu, "
		             "\"val_documents\": %llu, \"val_tokens\": %llu, \"truncate_at\": %llu, "
		             "\"truncated_documents\": %llu, \"truncated_tokens\": %llu}",
		             (unsigned long long)d->docs[0], (unsigned long long)d->tokens[0],
		             (unsigned long long)d->docs[1], (unsigned long long)d->tokens[1],
		             (unsigned long long)d->truncate_at, (unsigned long long)d->truncated_docs,
		             (unsigned long long)d->truncated_tokens);
	}
	llm_buf_adds(&b, m->ndomains ? "\n  }" : "}");
	if (m->extra && *m->extra) {
		llm_buf_adds(&b, ",\n  ");
		llm_buf_adds(&b, m->extra);
	}
	llm_buf_adds(&b, "\n}\n");
	int st = llm_write_file(path, b.p, b.len);
	llm_buf_release(&b);
	return st;
}

/* Members of the manifest as typed values; the detail names the manifest and the key. */
static int m_u64(const char *path, const llm_json_val *obj, const char *key, uint64_t *out)
{
	llm_json_val v = llm_json_member(obj, key);
	int64_t x;
	if (v.type != LLM_JSON_NUMBER || llm_json_i64(&v, &x) != LLM_OK || x < 0)
		return llm_fail(LLM_EFORMAT, "%s: '%s' is missing or not a count", path, key);
	*out = (uint64_t)x;
	return LLM_OK;
}

static int m_hex(const char *path, const llm_json_val *obj, const char *key, uint64_t *out)
{
	llm_json_val v = llm_json_member(obj, key);
	llm_buf b = LLM_BUF_INIT;
	int st = LLM_EFORMAT;
	if (v.type == LLM_JSON_STRING && llm_json_str(&v, &b) == LLM_OK && b.len == 16) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(b.p, &end, 16);
		if (!errno && *end == 0) {
			*out = x;
			st = LLM_OK;
		}
	}
	llm_buf_release(&b);
	return st == LLM_OK ? st : llm_fail(LLM_EFORMAT, "%s: '%s' is missing or not 16 hex digits", path, key);
}

/*
 * A shard's file name must stay inside the manifest's directory: relative, components neither
 * empty, "." nor "..", no NUL. A manifest is data, not a list of files to open anywhere
 * ("/etc/shadow", "../../home/x").
 */
static int inside_name(const char *p, size_t n)
{
	if (!p || n == 0 || memchr(p, 0, n) || p[0] == '/')
		return 0;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && p[j] != '/')
			j++;
		size_t k = j - i;
		if (k == 0 || (k == 1 && p[i] == '.') || (k == 2 && p[i] == '.' && p[i + 1] == '.'))
			return 0;
		i = j + 1;
	}
	return 1;
}

static int load_shard(llm_manifest *m, const char *path, const char *dir, const llm_json_val *o)
{
	llm_json_val f = llm_json_member(o, "file"), sp = llm_json_member(o, "split");
	llm_json_val cs = llm_json_member(o, "checksums");
	if (f.type != LLM_JSON_STRING || sp.type != LLM_JSON_STRING || cs.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: shard %zu lacks 'file', 'split' or 'checksums'", path,
		                m->nshards);
	int split = llm_json_str_eq(&sp, "train") ? LLM_SPLIT_TRAIN
	            : llm_json_str_eq(&sp, "val") ? LLM_SPLIT_VAL : -1;
	if (split < 0)
		return llm_fail(LLM_EFORMAT, "%s: shard %zu: split is not \"train\" or \"val\"", path,
		                m->nshards);
	llm_shard_info info;
	memset(&info, 0, sizeof info);
	uint64_t bytes;
	int st;
	if ((st = m_u64(path, o, "documents", &info.docs)) || (st = m_u64(path, o, "tokens", &info.tokens)) ||
	    (st = m_u64(path, o, "bytes", &bytes)) ||
	    (st = m_hex(path, o, "header_checksum", &info.header_checksum)))
		return st;
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		if ((st = m_hex(path, &cs, llm_shard_section_name(k), &info.sec[k].checksum)))
			return st;
	info.version = LLM_SHARD_VERSION;
	info.width = m->width;
	info.vocab_size = m->vocab_size;
	info.eos_id = m->eos_id;
	info.tokenizer_id = m->tokenizer_id;
	info.flags = m->noised ? LLM_SHARD_NOISED : 0;
	llm_buf name = LLM_BUF_INIT;
	llm_json_str(&f, &name);
	if (!inside_name(name.p, name.len)) {
		st = llm_fail(LLM_EFORMAT, "%s: shard %zu: file '%s' is not a name inside the "
		              "manifest's directory", path, m->nshards, name.p ? name.p : "");
		llm_buf_release(&name);
		return st;
	}
	for (size_t i = 0; i < m->nshards; i++)
		if (strcmp(m->shards[i].file, name.p) == 0) {
			st = llm_fail(LLM_EFORMAT, "%s: shard '%s' is listed twice", path, name.p);
			llm_buf_release(&name);
			return st;
		}
	llm_manifest_add_shard(m, name.p, split, &info, bytes);
	free(m->shards[m->nshards - 1].path);
	llm_buf full = LLM_BUF_INIT;
	llm_buf_addf(&full, "%s/%s", dir, name.p);
	m->shards[m->nshards - 1].path = llm_buf_detach(&full, NULL);
	llm_buf_release(&name);
	return LLM_OK;
}

static int load_domains(llm_manifest *m, const char *path, const llm_json_val *o)
{
	size_t it = 0;
	llm_json_val key, v;
	llm_buf name = LLM_BUF_INIT;
	int st = LLM_OK;
	while (st == LLM_OK && llm_json_next(o, &it, &key, &v) == LLM_OK) {
		llm_buf_reset(&name);
		llm_json_str(&key, &name);
		if (v.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: domain '%s' is not an object", path, name.p);
			break;
		}
		llm_manifest_domain *d = llm_manifest_domain_get(m, name.p ? name.p : "");
		(void)((st = m_u64(path, &v, "train_documents", &d->docs[0])) ||
		       (st = m_u64(path, &v, "train_tokens", &d->tokens[0])) ||
		       (st = m_u64(path, &v, "val_documents", &d->docs[1])) ||
		       (st = m_u64(path, &v, "val_tokens", &d->tokens[1])) ||
		       (st = m_u64(path, &v, "truncate_at", &d->truncate_at)) ||
		       (st = m_u64(path, &v, "truncated_documents", &d->truncated_docs)) ||
		       (st = m_u64(path, &v, "truncated_tokens", &d->truncated_tokens)));
	}
	llm_buf_release(&name);
	return st;
}

/* The split totals are the sums over the shards, and over the domains when the manifest has
 * a breakdown by domain (llm-shard's always do; "domains": {} gives none). */
static int check_totals(const llm_manifest *m, const char *path)
{
	int have_domains = m->ndomains > 0;
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		uint64_t d = 0, t = 0, dd = 0, dt = 0;
		for (size_t i = 0; i < m->nshards; i++)
			if (m->shards[i].split == sp) {
				d += m->shards[i].docs;
				t += m->shards[i].tokens;
			}
		for (size_t i = 0; i < m->ndomains; i++) {
			dd += m->domains[i].docs[sp];
			dt += m->domains[i].tokens[sp];
		}
		const char *what = d != m->split_docs[sp] || t != m->split_tokens[sp] ? "its shards"
		                   : have_domains && (dd != d || dt != t) ? "its domains" : NULL;
		if (what)
			return llm_fail(LLM_EFORMAT, "%s: the %s split's documents or tokens are not the "
			                "sum over %s", path, llm_split_name(sp), what);
	}
	return LLM_OK;
}

int llm_manifest_check_shard(const llm_manifest *m, const llm_manifest_shard *ms,
                             const llm_shard *s)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	struct stat st;
	const char *what = NULL;
	if (in->version != LLM_SHARD_VERSION)
		what = "version";
	else if (in->width != m->width)
		what = "token_width";
	else if (in->vocab_size != m->vocab_size)
		what = "vocab_size";
	else if (in->tokenizer_id != m->tokenizer_id)
		what = "tokenizer_id";
	else if (in->eos_id != m->eos_id)
		what = "eos_id";
	else if (!!(in->flags & LLM_SHARD_NOISED) != !!m->noised)
		what = "noised";
	else if (in->docs != ms->docs || in->tokens != ms->tokens)
		what = "document or token count";
	else if (stat(llm_shard_path(s), &st) != 0 || (uint64_t)st.st_size != ms->bytes)
		what = "size in bytes";
	else if (in->header_checksum != ms->info.header_checksum)
		what = "header checksum";
	for (int k = 1; !what && k <= LLM_SHARD_NSECTIONS; k++)
		if (in->sec[k].checksum != ms->info.sec[k].checksum)
			what = llm_shard_section_name(k);
	return what ? llm_fail(LLM_EFORMAT, "%s: differs from its manifest: %s", ms->path, what)
	            : LLM_OK;
}

int llm_manifest_load(llm_manifest *m, const char *path)
{
	llm_manifest_init(m);
	char *text;
	size_t len;
	int st = llm_read_file(path, &text, &len);
	if (st != LLM_OK)
		return st;
	llm_json_val top, v, key;
	size_t pos;
	const char *msg;
	char *dir = llm_tmpfile_dir(path);
	uint64_t x;
	if (llm_json_parse_value(text, len, &top, &pos, &msg) != LLM_OK || top.type != LLM_JSON_OBJECT) {
		st = llm_fail(LLM_EFORMAT, "%s: not a JSON object", path);
		goto out;
	}
	v = llm_json_member(&top, "format");
	if (v.type != LLM_JSON_STRING || !llm_json_str_eq(&v, "llmkit-shards")) {
		st = llm_fail(LLM_EFORMAT, "%s: not an llmkit shard manifest", path);
		goto out;
	}
	if ((st = m_u64(path, &top, "version", &x)))
		goto out;
	if (x != 1) {
		st = llm_fail(LLM_EFORMAT, "%s: manifest version %llu (this llmkit reads version 1)",
		              path, (unsigned long long)x);
		goto out;
	}
	if ((st = m_hex(path, &top, "tokenizer_id", &m->tokenizer_id)) ||
	    (st = m_u64(path, &top, "vocab_size", &x)))
		goto out;
	if (x > UINT32_MAX) {
		st = llm_fail(LLM_EFORMAT, "%s: vocab_size too large", path);
		goto out;
	}
	m->vocab_size = (uint32_t)x;
	if ((st = m_u64(path, &top, "token_width", &x)))
		goto out;
	m->width = (uint32_t)x;
	if (m->vocab_size == 0 || (m->width != 2 && m->width != 4)) {
		st = llm_fail(LLM_EFORMAT, "%s: bad vocab_size or token_width", path);
		goto out;
	}
	v = llm_json_member(&top, "eos_id");
	if (v.type != LLM_JSON_NULL) {
		if ((st = m_u64(path, &top, "eos_id", &x)))
			goto out;
		if (x >= m->vocab_size) {
			st = llm_fail(LLM_EFORMAT, "%s: eos_id is not below vocab_size", path);
			goto out;
		}
		m->eos_id = (uint32_t)x;
	}
	v = llm_json_member(&top, "noised");
	m->noised = v.type == LLM_JSON_TRUE;
	v = llm_json_member(&top, "shards");
	if (v.type != LLM_JSON_ARRAY) {
		st = llm_fail(LLM_EFORMAT, "%s: 'shards' is not an array", path);
		goto out;
	}
	size_t it = 0;
	llm_json_val o;
	while (llm_json_next(&v, &it, &key, &o) == LLM_OK) {
		if (o.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: shard %zu is not an object", path, m->nshards);
			goto out;
		}
		if ((st = load_shard(m, path, dir, &o)) != LLM_OK)
			goto out;
	}
	v = llm_json_member(&top, "splits");
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		llm_json_val o2 = llm_json_member(&v, llm_split_name(sp));
		if (v.type != LLM_JSON_OBJECT || o2.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: 'splits' lacks \"%s\"", path, llm_split_name(sp));
			goto out;
		}
		if ((st = m_u64(path, &o2, "documents", &m->split_docs[sp])) ||
		    (st = m_u64(path, &o2, "tokens", &m->split_tokens[sp])))
			goto out;
	}
	v = llm_json_member(&top, "domains");
	if (v.type == LLM_JSON_OBJECT && (st = load_domains(m, path, &v)) != LLM_OK)
		goto out;
	st = check_totals(m, path);
out:
	free(dir);
	free(text);
	if (st != LLM_OK)
		llm_manifest_release(m);
	return st;
}
