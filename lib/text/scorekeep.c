/*
 * scorekeep.c — parsing and evaluating --keep expressions (see scorekeep.h).
 *
 * A recursive-descent parser builds a tree in one array of nodes; evaluation walks it. The
 * depth of nesting is bounded so that a hostile expression cannot exhaust the stack.
 */
#include "scorekeep.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define MAX_DEPTH 64

enum { N_CMP, N_AND, N_OR, N_NOT };
enum { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

typedef struct {
	int kind;
	int op;     /* N_CMP */
	size_t var; /* N_CMP */
	double num; /* N_CMP */
	int a, b;   /* children (b: N_AND, N_OR) */
} node;

struct llm_scorekeep {
	node *nodes;
	size_t n, cap;
	char **vars;
	size_t nvars;
	int root;
};

typedef struct {
	llm_scorekeep *k;
	const char *s;
	size_t pos;
	int depth;
	const char *expr;
} parser;

static int fail(parser *p, const char *what)
{
	if (p->s[p->pos])
		return llm_fail(LLM_EINVAL, "'%s': at byte %zu: %s", p->expr, p->pos + 1, what);
	return llm_fail(LLM_EINVAL, "'%s': at its end: %s", p->expr, what);
}

static void skip(parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

static int add_node(parser *p, node n)
{
	llm_scorekeep *k = p->k;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 8;
		k->nodes = llm_realloc(k->nodes, k->cap * sizeof *k->nodes);
	}
	k->nodes[k->n] = n;
	return (int)k->n++;
}

static size_t var_index(llm_scorekeep *k, const char *name, size_t len)
{
	for (size_t i = 0; i < k->nvars; i++)
		if (strlen(k->vars[i]) == len && memcmp(k->vars[i], name, len) == 0)
			return i;
	k->vars = llm_realloc(k->vars, (k->nvars + 1) * sizeof *k->vars);
	k->vars[k->nvars] = llm_strndup(name, len);
	return k->nvars++;
}

static int is_word_start(int c) { return isalpha(c) || c == '_'; }
static int is_word(int c) { return isalnum(c) || c == '_' || c == '-'; }

/* WORD at p->pos; returns its length (0: none). */
static size_t word(parser *p, size_t at)
{
	size_t i = at;
	if (!is_word_start((unsigned char)p->s[i]))
		return 0;
	while (is_word((unsigned char)p->s[i]))
		i++;
	return i - at;
}

static int parse_expr(parser *p, int *out);

static int parse_cmp(parser *p, int *out)
{
	size_t start = p->pos, n = word(p, start);
	if (!n)
		return fail(p, "expected a score name, '!' or '('");
	p->pos += n;
	if (p->s[p->pos] == '.') {
		size_t m = word(p, p->pos + 1);
		if (!m) {
			p->pos++;
			return fail(p, "expected a name after '.'");
		}
		p->pos += 1 + m;
	}
	size_t name_len = p->pos - start;
	skip(p);
	static const char *const ops[] = { "<=", ">=", "==", "!=", "<", ">" };
	static const int op_of[] = { OP_LE, OP_GE, OP_EQ, OP_NE, OP_LT, OP_GT };
	int op = -1;
	for (int i = 0; i < 6 && op < 0; i++)
		if (strncmp(p->s + p->pos, ops[i], strlen(ops[i])) == 0) {
			op = op_of[i];
			p->pos += strlen(ops[i]);
		}
	if (op < 0)
		return fail(p, "expected a comparison (<, <=, >, >=, ==, !=)");
	skip(p);
	const char *num = p->s + p->pos;
	char *end;
	/* strtod would also take hex, inf and nan: only a decimal number is a threshold. */
	size_t ok = strspn(num, "+-0123456789.eE");
	double x = ok ? strtod(num, &end) : 0;
	if (!ok || end == num || (size_t)(end - num) > ok || !isfinite(x))
		return fail(p, "expected a number");
	p->pos += (size_t)(end - num);
	node nd = { .kind = N_CMP, .op = op, .num = x };
	nd.var = var_index(p->k, p->s + start, name_len);
	*out = add_node(p, nd);
	return LLM_OK;
}

static int parse_unary(parser *p, int *out)
{
	if (++p->depth > MAX_DEPTH)
		return fail(p, "nested too deeply");
	skip(p);
	int rc;
	if (p->s[p->pos] == '!' && p->s[p->pos + 1] != '=') {
		p->pos++;
		int a;
		if ((rc = parse_unary(p, &a)) != LLM_OK)
			return rc;
		*out = add_node(p, (node){ .kind = N_NOT, .a = a });
	} else if (p->s[p->pos] == '(') {
		p->pos++;
		if ((rc = parse_expr(p, out)) != LLM_OK)
			return rc;
		skip(p);
		if (p->s[p->pos] != ')')
			return fail(p, "expected ')'");
		p->pos++;
	} else if ((rc = parse_cmp(p, out)) != LLM_OK) {
		return rc;
	}
	p->depth--;
	return LLM_OK;
}

/* One level: operands of kind (N_AND: unary, N_OR: and) joined by tok. */
static int parse_level(parser *p, int kind, int *out)
{
	const char *tok = kind == N_AND ? "&&" : "||";
	int rc = kind == N_AND ? parse_unary(p, out) : parse_level(p, N_AND, out);
	if (rc != LLM_OK)
		return rc;
	for (;;) {
		skip(p);
		if (strncmp(p->s + p->pos, tok, 2) != 0)
			return LLM_OK;
		p->pos += 2;
		int b;
		rc = kind == N_AND ? parse_unary(p, &b) : parse_level(p, N_AND, &b);
		if (rc != LLM_OK)
			return rc;
		*out = add_node(p, (node){ .kind = kind, .a = *out, .b = b });
	}
}

static int parse_expr(parser *p, int *out)
{
	return parse_level(p, N_OR, out);
}

int llm_scorekeep_parse(llm_scorekeep **out, const char *expr)
{
	*out = NULL;
	llm_scorekeep *k = llm_calloc(1, sizeof *k);
	parser p = { .k = k, .s = expr, .expr = expr };
	int rc = parse_expr(&p, &k->root);
	if (rc == LLM_OK) {
		skip(&p);
		if (expr[p.pos])
			rc = fail(&p, "expected '&&', '||' or the end");
	}
	if (rc != LLM_OK) {
		llm_scorekeep_free(k);
		return rc;
	}
	*out = k;
	return LLM_OK;
}

void llm_scorekeep_free(llm_scorekeep *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nvars; i++)
		free(k->vars[i]);
	free(k->vars);
	free(k->nodes);
	free(k);
}

size_t llm_scorekeep_nvars(const llm_scorekeep *k) { return k->nvars; }
const char *llm_scorekeep_var(const llm_scorekeep *k, size_t i) { return k->vars[i]; }

static int eval(const llm_scorekeep *k, int i, const double *v)
{
	const node *n = &k->nodes[i];
	switch (n->kind) {
	case N_AND: return eval(k, n->a, v) && eval(k, n->b, v);
	case N_OR: return eval(k, n->a, v) || eval(k, n->b, v);
	case N_NOT: return !eval(k, n->a, v);
	}
	double x = v[n->var];
	switch (n->op) {
	case OP_LT: return x < n->num;
	case OP_LE: return x <= n->num;
	case OP_GT: return x > n->num;
	case OP_GE: return x >= n->num;
	case OP_EQ: return x == n->num;
	default: return x != n->num;
	}
}

int llm_scorekeep_eval(const llm_scorekeep *k, const double *values)
{
	return eval(k, k->root, values);
}
