/*
 * pii.c — PII scanners (see pii.h). Hand-written scanners rather than regular expressions
 * because every kind needs a check a pattern cannot express (Luhn, the ID checksum and birth
 * date, inet_pton's address grammar), and one left-to-right pass tries all kinds at once.
 */
#include "pii.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "core/err.h"
#include "core/utf8.h"

static const char *const names[5] = { "email", "ip", "phone", "id", "card" };
static const char *const defaults[5] = { "<EMAIL>", "<IP>", "<PHONE>", "<ID>", "<CARD>" };

const char *llm_pii_name(int i)
{
	return i >= 0 && i < 5 ? names[i] : "?";
}

int llm_pii_parse(const char *list, unsigned *kinds)
{
	*kinds = 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 3 && memcmp(p, "all", 3) == 0) {
			*kinds |= LLM_PII_ALL;
		} else {
			int k = 0;
			while (k < 5 && !(strlen(names[k]) == n && memcmp(names[k], p, n) == 0))
				k++;
			if (k == 5)
				return llm_fail(LLM_EINVAL, "unknown PII kind '%.*s'", (int)n, p);
			*kinds |= 1u << k;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return LLM_OK;
}

static inline bool dig(char c) { return c >= '0' && c <= '9'; }
static inline bool alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static inline bool alnum(char c) { return dig(c) || alpha(c); }

/* A letter or digit of any script at s[i] (so matches never cut a word). */
static bool word_at(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return false;
	unsigned char c = (unsigned char)s[i];
	if (c < 0x80)
		return alnum((char)c);
	uint32_t cp;
	llm_utf8_decode(s + i, n - i, &cp);
	/* CJK characters border numbers directly ("电话13812345678"), so they are boundaries */
	return llm_uc_is(cp, LLM_UC_LETTER | LLM_UC_DIGIT) && !llm_uc_is(cp, LLM_UC_CJK);
}

static bool word_before(const char *s, size_t i)
{
	if (i == 0)
		return false;
	size_t k = i - 1;
	while (k > 0 && i - k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	return word_at(s, i, k);
}

static bool local_char(char c)
{
	return alnum(c) || (c && strchr("._%+-'", c));
}

/* E-mail whose '@' is at s[at]; sets [*a, *b). */
static bool email_at(const char *s, size_t n, size_t at, size_t lo, size_t *a, size_t *b)
{
	size_t i = at;
	while (i > lo && local_char(s[i - 1]))
		i--;
	while (i < at && (s[i] == '.' || s[i] == '\''))
		i++;
	if (i == at)
		return false;
	size_t j = at + 1, last_dot = 0;
	while (j < n && (alnum(s[j]) || s[j] == '-' || (s[j] == '.' && j + 1 < n && alnum(s[j + 1])))) {
		if (s[j] == '.')
			last_dot = j;
		j++;
	}
	if (!last_dot || j - last_dot < 3)
		return false;
	for (size_t k = last_dot + 1; k < j; k++)
		if (!alpha(s[k]))
			return false;
	*a = i;
	*b = j;
	return true;
}

static bool ip_at(const char *s, size_t n, size_t i, size_t *b)
{
	/* longest run of address characters, then the longest prefix inet_pton accepts */
	size_t j = i, colons = 0, dots = 0;
	while (j < n && j - i < 45 && (dig(s[j]) || ((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'f') ||
	                               s[j] == ':' || s[j] == '.')) {
		colons += s[j] == ':';
		dots += s[j] == '.';
		j++;
	}
	if (colons < 2 && dots != 3 && dots < 3)
		return false;
	char buf[64];
	unsigned char addr[16];
	for (size_t e = j; e > i + 1; e--) {
		if (s[e - 1] == '.' || (s[e - 1] == ':' && !(e >= 2 && s[e - 2] == ':')))
			continue;
		if (word_at(s, n, e) || (e < n && (s[e] == '.' || s[e] == ':') && e + 1 < n && alnum(s[e + 1])))
			continue;
		memcpy(buf, s + i, e - i);
		buf[e - i] = 0;
		if ((memchr(buf, ':', e - i) ? inet_pton(AF_INET6, buf, addr)
		                             : inet_pton(AF_INET, buf, addr)) == 1) {
			*b = e;
			return true;
		}
	}
	return false;
}

/* Digits of s[i..) allowing single separators from seps between digit groups; returns end and
 * the digits (at most max). */
static size_t digits_run(const char *s, size_t n, size_t i, const char *seps, char *d, size_t *nd,
                         size_t max)
{
	size_t j = i;
	*nd = 0;
	while (j < n && *nd < max) {
		if (dig(s[j])) {
			d[(*nd)++] = s[j++];
		} else if (seps && strchr(seps, s[j]) && s[j] && j + 1 < n && dig(s[j + 1]) && j > i &&
		           dig(s[j - 1])) {
			j++;
		} else {
			break;
		}
	}
	return j;
}

static bool luhn(const char *d, size_t n)
{
	int sum = 0;
	for (size_t i = 0; i < n; i++) {
		int v = d[n - 1 - i] - '0';
		if (i & 1) {
			v *= 2;
			if (v > 9)
				v -= 9;
		}
		sum += v;
	}
	return sum % 10 == 0;
}

static bool id_cn(const char *s, size_t n, size_t i, size_t *b)
{
	if (n - i < 18)
		return false;
	for (int k = 0; k < 17; k++)
		if (!dig(s[i + k]))
			return false;
	char last = s[i + 17];
	if (!dig(last) && last != 'X' && last != 'x')
		return false;
	static const int wt[17] = { 7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2 };
	int sum = 0;
	for (int k = 0; k < 17; k++)
		sum += (s[i + k] - '0') * wt[k];
	if ("10X98765432"[sum % 11] != (last == 'x' ? 'X' : last))
		return false;
	int y = (s[i + 6] - '0') * 1000 + (s[i + 7] - '0') * 100 + (s[i + 8] - '0') * 10 + (s[i + 9] - '0');
	int m = (s[i + 10] - '0') * 10 + (s[i + 11] - '0');
	int d = (s[i + 12] - '0') * 10 + (s[i + 13] - '0');
	if (y < 1900 || y > 2099 || m < 1 || m > 12 || d < 1 || d > 31)
		return false;
	*b = i + 18;
	return !word_at(s, n, *b);
}

static bool phone(const char *s, size_t n, size_t i, size_t *b)
{
	char d[24];
	size_t nd, j;
	if (s[i] == '+') {
		/* +CC [(area)] groups; 8..15 digits in all (E.164) */
		size_t k = i + 1, total = 0;
		if (k >= n || !dig(s[k]))
			return false;
		while (k < n) {
			if (dig(s[k])) {
				total++;
				k++;
			} else if ((s[k] == ' ' || s[k] == '-' || s[k] == '.') && k + 1 < n &&
			           (dig(s[k + 1]) || s[k + 1] == '(')) {
				k++;
			} else if (s[k] == '(' && k + 1 < n && dig(s[k + 1])) {
				size_t e = k + 1;
				while (e < n && dig(s[e]) && e - k < 6)
					e++;
				if (e >= n || s[e] != ')')
					break;
				total += e - k - 1;
				k = e + 1;
				if (k < n && s[k] == ' ')
					k++;
			} else {
				break;
			}
		}
		while (k > i && !dig(s[k - 1]))
			k--;
		if (total < 8 || total > 15 || word_at(s, n, k))
			return false;
		*b = k;
		return true;
	}
	/* Chinese mobile: 1[3-9] + 9 digits, optionally "86" before */
	j = digits_run(s, n, i, " -", d, &nd, 20);
	size_t off = (nd == 13 && d[0] == '8' && d[1] == '6') ? 2 : 0;
	if (nd - off == 11 && d[off] == '1' && d[off + 1] >= '3' && d[off + 1] <= '9' && !word_at(s, n, j)) {
		*b = j;
		return true;
	}
	/* North American: (NXX) NXX-XXXX or NXX-NXX-XXXX / NXX.NXX.XXXX */
	size_t k = i;
	if (s[k] == '(') {
		if (n - k < 14 || !dig(s[k + 1]) || !dig(s[k + 2]) || !dig(s[k + 3]) || s[k + 4] != ')')
			return false;
		k += 5;
		if (s[k] == ' ')
			k++;
	} else {
		if (n - k < 12 || !dig(s[k]) || !dig(s[k + 1]) || !dig(s[k + 2]) ||
		    (s[k + 3] != '-' && s[k + 3] != '.'))
			return false;
		k += 4;
	}
	if (n - k < 8 || !dig(s[k]) || !dig(s[k + 1]) || !dig(s[k + 2]) || (s[k + 3] != '-' && s[k + 3] != '.'))
		return false;
	for (int q = 4; q < 8; q++)
		if (!dig(s[k + q]))
			return false;
	if (s[k] < '2' || word_at(s, n, k + 8))
		return false;
	*b = k + 8;
	return true;
}

static bool card(const char *s, size_t n, size_t i, size_t *b)
{
	char d[24];
	size_t nd;
	size_t j = digits_run(s, n, i, " -", d, &nd, 20);
	if (nd < 13 || nd > 19 || word_at(s, n, j) || !luhn(d, nd))
		return false;
	*b = j;
	return true;
}

size_t llm_pii_mask(const char *s, size_t n, const llm_pii_opts *o, llm_buf *out, size_t counts[5])
{
	size_t masks = 0, copied = 0, lo = 0;
	unsigned k = o->kinds;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int kind = -1;
		size_t a = i, b = i;
		if (c == '@' && (k & LLM_PII_EMAIL) && email_at(s, n, i, lo, &a, &b)) {
			kind = 0;
		} else if (a >= copied && !word_before(s, i) &&
		           !(i >= 2 && (s[i - 1] == '.' || s[i - 1] == ':' || s[i - 1] == '-') && alnum(s[i - 2])) &&
		           (dig(c) || c == '+' || c == '(' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') || c == ':')) {
			/* an address starting with a hex letter or ':' is IPv6: a ':' comes within 5 */
			bool v6 = dig(c) || memchr(s + i, ':', n - i < 6 ? n - i : 6) != NULL;
			if ((k & LLM_PII_IP) && v6 && ip_at(s, n, i, &b))
				kind = 1;
			else if (dig(c) && (k & LLM_PII_ID_CN) && id_cn(s, n, i, &b))
				kind = 3;
			else if (dig(c) && (k & LLM_PII_CARD) && card(s, n, i, &b))
				kind = 4;
			else if ((k & LLM_PII_PHONE) && (dig(c) || c == '+' || c == '(') && phone(s, n, i, &b))
				kind = 2;
		}
		if (kind < 0) {
			if (c == ' ' || c == '\n' || c == '<' || c == '>' || c == '"' || c == ',' || c == ';')
				lo = i + 1;
			continue;
		}
		if (a < copied)
			a = copied;
		llm_buf_add(out, s + copied, a - copied);
		llm_buf_adds(out, o->placeholder[kind] ? o->placeholder[kind] : defaults[kind]);
		copied = b;
		lo = b;
		i = b - 1;
		masks++;
		if (counts)
			counts[kind]++;
	}
	llm_buf_add(out, s + copied, n - copied);
	return masks;
}
