/*
 * spm.c — SentencePiece model files: loading, the trie of pieces, normalization, decoding
 * (spm.h). The encoders are in spm_encode.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/utf8.h"
#include "sentencepiece_model.pb-c.h"
#include "spm_internal.h"

/* U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's space. */
static const char SPACE_SYMBOL[] = "\xe2\x96\x81";
#define SPACE_LEN 3

static unsigned hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'A' && c <= 'F')
		return (unsigned)(c - 'A' + 10);
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return 16;
}

bool llm_spm_is_model(const void *data, size_t len)
{
	/* Field 1 (pieces), length-delimited: tag 0x0a, then a varint length whose message
	 * starts with the piece's own field 1 tag. */
	const unsigned char *p = data;
	if (len < 3 || p[0] != 0x0a)
		return false;
	size_t i = 1;
	while (i < len && i < 6 && (p[i] & 0x80))
		i++;
	return i + 1 < len && p[i + 1] == 0x0a;
}

void llm_spm_free(llm_spm *m)
{
	if (!m)
		return;
	free(m->off);
	free(m->len);
	free(m->score);
	free(m->type);
	llm_buf_release(&m->arena);
	free(m->piece);
	free(m->reserved);
	free(m->edges);
	free(m->unk_surface);
	free(m->darts);
	free(m->norm);
	free(m->name);
	free(m);
}

static uint32_t trie_add(llm_spm *m, const char *s, size_t n)
{
	uint32_t node = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		uint64_t key = ((uint64_t)node << 8 | c) + 1;
		size_t k = (size_t)(llm_mix64(key) & m->emask);
		while (m->edges[k].key && m->edges[k].key != key)
			k = (k + 1) & m->emask;
		if (!m->edges[k].key) {
			m->edges[k].key = key;
			m->edges[k].child = m->nnodes;
			m->piece[m->nnodes] = m->reserved[m->nnodes] = SPM_NONE;
			m->nnodes++;
		}
		node = m->edges[k].child;
	}
	return node;
}

/* The trie of every piece: at most one node per byte of the pieces plus the root, and an edge
 * table at most half full. */
static int build_trie(llm_spm *m)
{
	size_t bytes = m->arena.len + 1;
	size_t cap = 16;
	while (cap < 2 * bytes)
		cap *= 2;
	m->emask = cap - 1;
	m->edges = llm_calloc(cap, sizeof *m->edges);
	m->piece = llm_malloc(bytes * sizeof *m->piece);
	m->reserved = llm_malloc(bytes * sizeof *m->reserved);
	m->piece[0] = m->reserved[0] = SPM_NONE;
	m->nnodes = 1;
	for (uint32_t id = 0; id < m->n; id++) {
		const char *s = m->arena.p + m->off[id];
		uint32_t node = trie_add(m, s, m->len[id]);
		int t = m->type[id];
		uint32_t *slot = t == LLM_SPM_NORMAL || t == LLM_SPM_USER_DEFINED || t == LLM_SPM_UNUSED
		                 ? &m->piece[node] : &m->reserved[node];
		if (*slot != SPM_NONE || m->len[id] == 0)
			return llm_fail(LLM_EFORMAT, "%s: piece %u (\"%.*s\") is %s", m->name, id,
			                (int)m->len[id], s, m->len[id] ? "a duplicate" : "empty");
		*slot = id;
		if (t == LLM_SPM_USER_DEFINED) {
			m->udef_first[(unsigned char)s[0]] = 1;
			m->any_udef = true;
		}
	}
	return LLM_OK;
}

uint32_t spm_piece_to_id(const llm_spm *m, const char *s, size_t n)
{
	uint32_t node = spm_node(m, s, n);
	if (node != SPM_NONE && m->reserved[node] != SPM_NONE)
		return m->reserved[node];
	if (node != SPM_NONE && m->piece[node] != SPM_NONE)
		return m->piece[node];
	return (uint32_t)m->unk;
}

size_t spm_udef_prefix(const llm_spm *m, const char *s, size_t n)
{
	if (!m->any_udef || !n || !m->udef_first[(unsigned char)s[0]])
		return 0;
	size_t best = 0;
	uint32_t node = 0;
	for (size_t i = 0; i < n; i++) {
		if ((node = spm_step(m, node, (unsigned char)s[i])) == SPM_NONE)
			break;
		uint32_t id = m->piece[node];
		if (id != SPM_NONE && m->type[id] == LLM_SPM_USER_DEFINED)
			best = i + 1;
	}
	return best;
}

void spm_emit(const llm_spm *m, const char *s, size_t n, uint32_t id, llm_ids *out)
{
	if (id == (uint32_t)m->unk && m->byte_fallback) {
		/* All of its bytes, or the unknown piece when one has none (a tokenizer.json may lack
		 * some byte pieces; a model file has all 256) */
		size_t i = 0;
		while (i < n && m->byte_id[(unsigned char)s[i]] != SPM_NONE)
			i++;
		if (i == n) {
			for (i = 0; i < n; i++)
				llm_ids_push(out, m->byte_id[(unsigned char)s[i]]);
			return;
		}
	}
	llm_ids_push(out, id);
}

/* The charsmap is a little-endian u32 trie size, the trie's units, then the replacements. */
static int load_charsmap(llm_spm *m, const uint8_t *p, size_t n)
{
	if (n == 0)
		return LLM_OK;
	if (n < 4)
		return llm_fail(LLM_EFORMAT, "%s: precompiled_charsmap of %zu bytes", m->name, n);
	uint32_t tsize = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	                 (uint32_t)p[3] << 24;
	if (tsize % 4 || tsize > n - 4 || tsize == 0)
		return llm_fail(LLM_EFORMAT, "%s: precompiled_charsmap: trie of %u bytes in %zu",
		                m->name, tsize, n - 4);
	m->ndarts = tsize / 4;
	m->darts = llm_malloc(tsize);
	for (size_t i = 0; i < m->ndarts; i++) {
		const uint8_t *u = p + 4 + 4 * i;
		m->darts[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 |
		              (uint32_t)u[3] << 24;
	}
	m->norm_len = n - 4 - tsize;
	/* One NUL more, so that a replacement at the end is terminated whatever the file says. */
	m->norm = llm_malloc(m->norm_len + 1);
	memcpy(m->norm, p + 4 + tsize, m->norm_len);
	m->norm[m->norm_len] = 0;
	return LLM_OK;
}

static int load_pieces(llm_spm *m, const Sentencepiece__ModelProto *mp)
{
	if (mp->n_pieces == 0 || mp->n_pieces >= (1u << 31))
		return llm_fail(LLM_EFORMAT, "%s: %zu pieces", m->name, mp->n_pieces);
	m->n = (uint32_t)mp->n_pieces;
	m->off = llm_malloc(m->n * sizeof *m->off);
	m->len = llm_malloc(m->n * sizeof *m->len);
	m->score = llm_malloc(m->n * sizeof *m->score);
	m->type = llm_malloc(m->n);
	m->min_score = 3.402823466e+38;
	m->max_score = 1.175494351e-38; /* FLT_MIN, as SentencePiece starts it */
	for (uint32_t i = 0; i < 256; i++)
		m->byte_id[i] = SPM_NONE;
	uint32_t nbytes = 0;
	for (uint32_t id = 0; id < m->n; id++) {
		const Sentencepiece__ModelProto__SentencePiece *sp = mp->pieces[id];
		m->off[id] = (uint32_t)m->arena.len;
		m->len[id] = (uint32_t)sp->piece.len;
		llm_buf_add(&m->arena, sp->piece.data, sp->piece.len);
		m->score[id] = sp->score;
		int t = sp->type;
		if (t < LLM_SPM_NORMAL || t > LLM_SPM_BYTE)
			return llm_fail(LLM_EFORMAT, "%s: piece %u has type %d", m->name, id, t);
		m->type[id] = (unsigned char)t;
		if (t == LLM_SPM_NORMAL) {
			if (sp->score < m->min_score)
				m->min_score = sp->score;
			if (sp->score > m->max_score)
				m->max_score = sp->score;
		}
		if (t == LLM_SPM_UNKNOWN) {
			if (m->unk >= 0)
				return llm_fail(LLM_EFORMAT, "%s: two unknown pieces (%lld, %u)", m->name,
				                (long long)m->unk, id);
			m->unk = id;
		}
		unsigned hi, lo;
		if (t == LLM_SPM_BYTE) {
			const char *s = (const char *)sp->piece.data;
			if (sp->piece.len != 6 || memcmp(s, "<0x", 3) || s[5] != '>' ||
			    (hi = hex_digit(s[3])) > 15 || (lo = hex_digit(s[4])) > 15)
				return llm_fail(LLM_EFORMAT, "%s: byte piece %u is \"%.*s\", not <0xXX>",
				                m->name, id, (int)sp->piece.len, s);
			if (m->byte_id[hi << 4 | lo] == SPM_NONE)
				nbytes++;
			m->byte_id[hi << 4 | lo] = id;
		}
	}
	if (m->unk < 0)
		return llm_fail(LLM_EFORMAT, "%s: no unknown piece", m->name);
	if (m->byte_fallback && nbytes != 256)
		return llm_fail(LLM_EFORMAT, "%s: byte_fallback with %u of the 256 byte pieces", m->name,
		                nbytes);
	return LLM_OK;
}

/* The trainer spec's id of a special piece, kept only when the piece has that id's type
 * (SentencePiece gives -1 to a disabled one). */
static int64_t special_id(const llm_spm *m, bool has, int32_t id, int32_t dflt)
{
	int32_t v = has ? id : dflt;
	return v >= 0 && (uint32_t)v < m->n ? v : -1;
}

int llm_spm_load(llm_spm **out, const void *data, size_t len, const char *name)
{
	*out = NULL;
	Sentencepiece__ModelProto *mp = sentencepiece__model_proto__unpack(NULL, len, data);
	if (!mp)
		return llm_fail(LLM_EFORMAT, "%s: not a SentencePiece model (the protobuf does not parse)",
		                name);
	llm_spm *m = llm_calloc(1, sizeof *m);
	m->name = llm_strdup(name);
	m->unk = -1;
	const Sentencepiece__TrainerSpec *ts = mp->trainer_spec;
	const Sentencepiece__NormalizerSpec *ns = mp->normalizer_spec;
	int mt = ts && ts->has_model_type ? (int)ts->model_type : SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__UNIGRAM;
	int rc = LLM_OK;
	if (mt == SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__WORD ||
	    mt == SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__CHAR)
		rc = llm_fail(LLM_EUNSUPPORTED, "%s: SentencePiece model type %s is not supported "
		              "(BPE and Unigram are)", name, mt == 3 ? "WORD" : "CHAR");
	else if (mt != SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__UNIGRAM &&
	         mt != SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__BPE)
		rc = llm_fail(LLM_EFORMAT, "%s: SentencePiece model type %d", name, mt);
	m->unigram = mt == SENTENCEPIECE__TRAINER_SPEC__MODEL_TYPE__UNIGRAM;
	m->byte_fallback = ts && ts->byte_fallback;
	m->ws_suffix = ts && ts->treat_whitespace_as_suffix;
	m->unk_surface = llm_strdup(ts && ts->unk_surface ? ts->unk_surface : " \xe2\x81\x87 ");
	m->add_dummy_prefix = !ns || !ns->has_add_dummy_prefix || ns->add_dummy_prefix;
	m->remove_extra_ws = !ns || !ns->has_remove_extra_whitespaces || ns->remove_extra_whitespaces;
	m->escape_ws = !ns || !ns->has_escape_whitespaces || ns->escape_whitespaces;
	if (!rc)
		rc = load_pieces(m, mp);
	if (!rc && ns && ns->has_precompiled_charsmap)
		rc = load_charsmap(m, ns->precompiled_charsmap.data, ns->precompiled_charsmap.len);
	if (!rc)
		rc = build_trie(m);
	if (!rc) {
		m->bos = special_id(m, ts && ts->has_bos_id, ts ? ts->bos_id : 0, 1);
		m->eos = special_id(m, ts && ts->has_eos_id, ts ? ts->eos_id : 0, 2);
		m->pad = special_id(m, ts && ts->has_pad_id, ts ? ts->pad_id : 0, -1);
		if (ts && ts->has_unk_id && ts->unk_id != m->unk)
			rc = llm_fail(LLM_EFORMAT, "%s: unk_id %d is not the unknown piece %lld", name,
			              ts->unk_id, (long long)m->unk);
	}
	sentencepiece__model_proto__free_unpacked(mp, NULL);
	if (rc) {
		llm_spm_free(m);
		return rc;
	}
	*out = m;
	return LLM_OK;
}

int llm_spm_from_vocab(llm_spm **out, const char *name, uint32_t n, const char *const *piece,
                       const size_t *len, const double *score, int64_t unk, bool byte_fallback)
{
	*out = NULL;
	if (unk < 0)
		return llm_fail(LLM_EUNSUPPORTED, "%s: a Unigram model without unk_id is not supported",
		                name);
	if (n == 0 || unk >= (int64_t)n)
		return llm_fail(LLM_EFORMAT, "%s: Unigram model of %u pieces, unk_id %lld", name, n,
		                (long long)unk);
	llm_spm *m = llm_calloc(1, sizeof *m);
	m->name = llm_strdup(name);
	m->hf = m->unigram = true;
	m->unk = unk;
	m->bos = m->eos = m->pad = -1;
	m->n = n;
	m->off = llm_malloc(n * sizeof *m->off);
	m->len = llm_malloc(n * sizeof *m->len);
	m->score = llm_malloc(n * sizeof *m->score);
	m->type = llm_malloc(n);
	m->unk_surface = llm_strdup("");
	/* tokenizers takes the extremes over every piece */
	m->min_score = INFINITY;
	m->max_score = -INFINITY;
	for (uint32_t i = 0; i < 256; i++)
		m->byte_id[i] = SPM_NONE;
	uint32_t nbytes = 0;
	for (uint32_t id = 0; id < n; id++) {
		m->off[id] = (uint32_t)m->arena.len;
		m->len[id] = (uint32_t)len[id];
		llm_buf_add(&m->arena, piece[id], len[id]);
		m->score[id] = score[id];
		m->type[id] = LLM_SPM_NORMAL;
		if (score[id] < m->min_score)
			m->min_score = score[id];
		if (score[id] > m->max_score)
			m->max_score = score[id];
		unsigned hi, lo;
		const char *p = piece[id];
		if (len[id] == 6 && memcmp(p, "<0x", 3) == 0 && p[5] == '>' &&
		    (hi = hex_digit(p[3])) < 16 && (lo = hex_digit(p[4])) < 16 &&
		    m->byte_id[hi << 4 | lo] == SPM_NONE) {
			m->byte_id[hi << 4 | lo] = id;
			nbytes++;
		}
	}
	m->byte_fallback = byte_fallback && nbytes > 0;
	int rc = build_trie(m);
	if (rc) {
		llm_spm_free(m);
		return rc;
	}
	*out = m;
	return LLM_OK;
}

uint32_t llm_spm_size(const llm_spm *m) { return m->n; }
int llm_spm_type(const llm_spm *m, uint32_t id) { return id < m->n ? m->type[id] : 0; }
double llm_spm_score(const llm_spm *m, uint32_t id) { return id < m->n ? m->score[id] : 0; }
int64_t llm_spm_unk(const llm_spm *m) { return m->unk; }
int64_t llm_spm_bos(const llm_spm *m) { return m->bos; }
int64_t llm_spm_eos(const llm_spm *m) { return m->eos; }
bool llm_spm_is_unigram(const llm_spm *m) { return m->unigram; }

const char *llm_spm_piece(const llm_spm *m, uint32_t id, size_t *len)
{
	if (id >= m->n)
		return NULL;
	*len = m->len[id];
	return m->arena.p + m->off[id];
}

/* ---- normalization ---- */

/* darts-clone's unit fields. */
static inline uint32_t du_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
static inline uint32_t du_label(uint32_t u) { return u & ((1u << 31) | 0xff); }
static inline bool du_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t du_value(uint32_t u) { return u & ((1u << 31) - 1); }

/* The longest rule whose source starts s[0..n): its length, and its replacement's offset in
 * *value; 0 when none. A unit outside the array (a corrupt charsmap) ends the search. */
static size_t charsmap_longest(const llm_spm *m, const char *s, size_t n, uint32_t *value)
{
	const uint32_t *a = m->darts;
	size_t na = m->ndarts, best = 0;
	uint32_t pos = du_offset(a[0]);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		pos ^= c;
		if (pos >= na)
			break;
		uint32_t u = a[pos];
		if (du_label(u) != c)
			break;
		pos ^= du_offset(u);
		if (pos >= na)
			break;
		if (du_has_leaf(u)) {
			uint32_t v = du_value(a[pos]);
			if (v < m->norm_len) {
				best = i + 1;
				*value = v;
			}
		}
	}
	return best;
}

/* SentencePiece's NormalizePrefix: the replacement of the text s[0..n) (n > 0) starts with,
 * and how many bytes it consumes. A user-defined symbol is kept as it is; a byte that does
 * not start a UTF-8 character becomes U+FFFD. */
static size_t normalize_prefix(const llm_spm *m, const char *s, size_t n, const char **rep,
                               size_t *rep_len)
{
	size_t k = spm_udef_prefix(m, s, n);
	if (k) {
		*rep = s;
		*rep_len = k;
		return k;
	}
	uint32_t v = 0;
	if (m->darts && (k = charsmap_longest(m, s, n, &v))) {
		*rep = m->norm + v;
		*rep_len = strlen(m->norm + v);
		return k;
	}
	size_t ok = llm_utf8_valid_prefix(s, n > 4 ? 4 : n);
	uint32_t cp;
	if (ok == 0) {
		*rep = "\xef\xbf\xbd";
		*rep_len = 3;
		return 1;
	}
	k = llm_utf8_decode(s, n, &cp);
	*rep = s;
	*rep_len = k;
	return k;
}

static void add_space(const llm_spm *m, llm_buf *out)
{
	if (m->escape_ws)
		llm_buf_add(out, SPACE_SYMBOL, SPACE_LEN);
	else
		llm_buf_addc(out, ' ');
}

void llm_spm_normalize(llm_spm_enc *e, const char *s, size_t n, const char **norm,
                       size_t *norm_len)
{
	const llm_spm *m = e->m;
	llm_buf *out = &e->norm;
	llm_buf_reset(out);
	const char *rep;
	size_t rl, k;
	if (m->remove_extra_ws)
		while (n && (k = normalize_prefix(m, s, n, &rep, &rl)) && rl == 1 && rep[0] == ' ') {
			s += k;
			n -= k;
		}
	if (n == 0) {
		*norm = out->p ? out->p : "";
		*norm_len = 0;
		return;
	}
	if (!m->ws_suffix && m->add_dummy_prefix)
		add_space(m, out);
	bool prev_space = m->remove_extra_ws;
	while (n) {
		k = normalize_prefix(m, s, n, &rep, &rl);
		if (prev_space && m->remove_extra_ws)
			while (rl && rep[0] == ' ') {
				rep++;
				rl--;
			}
		if (rl) {
			for (size_t i = 0; i < rl; i++) {
				if (m->escape_ws && rep[i] == ' ')
					llm_buf_add(out, SPACE_SYMBOL, SPACE_LEN);
				else
					llm_buf_addc(out, rep[i]);
			}
			prev_space = rep[rl - 1] == ' ';
		}
		s += k;
		n -= k;
		if (!m->remove_extra_ws)
			prev_space = false;
	}
	if (m->remove_extra_ws) {
		const char *sp = m->escape_ws ? SPACE_SYMBOL : " ";
		size_t sl = m->escape_ws ? SPACE_LEN : 1;
		while (out->len >= sl && memcmp(out->p + out->len - sl, sp, sl) == 0)
			out->len -= sl;
	}
	if (m->ws_suffix && m->add_dummy_prefix)
		add_space(m, out);
	*norm = out->p;
	*norm_len = out->len;
}

/* ---- decoding ---- */

/* Bytes of <0xXX> pieces, gathered until another piece: UTF-8 as they are, else U+FFFD for
 * each byte of a sequence that is not (SentencePiece's decoder). */
static void flush_bytes(llm_buf *out, llm_buf *bytes)
{
	const char *p = bytes->p;
	size_t n = bytes->len;
	while (n) {
		size_t ok = llm_utf8_valid_prefix(p, n);
		llm_buf_add(out, p, ok);
		p += ok;
		n -= ok;
		if (n) {
			llm_buf_add(out, "\xef\xbf\xbd", 3);
			p++;
			n--;
		}
	}
	llm_buf_reset(bytes);
}

int llm_spm_decode(const llm_spm *m, const uint32_t *ids, size_t n, llm_buf *out)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= m->n)
			return llm_fail(LLM_EINVAL, "token id %u outside the vocabulary of %u", ids[i], m->n);
	llm_buf bytes = LLM_BUF_INIT;
	size_t start = out->len;
	bool first = true; /* no text written yet: a leading space is the dummy prefix's */
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		int t = m->type[id];
		const char *p = m->arena.p + m->off[id];
		size_t len = m->len[id];
		if (t == LLM_SPM_BYTE) {
			unsigned hi = hex_digit(p[3]), lo = hex_digit(p[4]);
			llm_buf_addc(&bytes, (char)(hi << 4 | lo));
			continue;
		}
		flush_bytes(out, &bytes);
		if (t == LLM_SPM_CONTROL)
			continue;
		if (t == LLM_SPM_UNKNOWN) {
			llm_buf_adds(out, m->unk_surface);
			continue;
		}
		if (first && out->len == start && !m->ws_suffix && len >= SPACE_LEN &&
		    memcmp(p, SPACE_SYMBOL, SPACE_LEN) == 0) {
			p += SPACE_LEN;
			len -= SPACE_LEN;
		}
		first = false;
		for (size_t k = 0; k < len;) {
			if (k + SPACE_LEN <= len && memcmp(p + k, SPACE_SYMBOL, SPACE_LEN) == 0) {
				llm_buf_addc(out, ' ');
				k += SPACE_LEN;
			} else {
				llm_buf_addc(out, p[k++]);
			}
		}
	}
	flush_bytes(out, &bytes);
	llm_buf_release(&bytes);
	return LLM_OK;
}
