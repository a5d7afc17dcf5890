/*
 * pii.h — masking of personal data in text with typed placeholders.
 *
 * Kinds (each a bit; LLM_PII_ALL by default) and what counts as one:
 *   EMAIL    local@domain.tld (RFC 5322 dot-atom local part, a domain with a 2+ letter TLD)
 *   IP       IPv4 dotted quads (each part 0..255, no leading zeros) and IPv6 (any form
 *            inet_pton(3) accepts, including "::" and embedded IPv4)
 *   PHONE    international numbers (+CC then 7..13 digits, spaces, dots, dashes or one
 *            parenthesised area code); North American (NXX) NXX-XXXX; Chinese mobile numbers
 *            1[3-9]XXXXXXXXX with an optional +86 / 86 prefix
 *   ID_CN    Chinese resident identity numbers: 17 digits + check character (ISO 7064 MOD
 *            11-2) with a plausible birth date; a wrong checksum is not masked
 *   CARD     bank card numbers: 13..19 digits, optionally in groups separated by one space
 *            or dash, passing the Luhn check
 * A match must not touch a letter or digit on either side (so parts of longer numbers or
 * words are never masked). Placeholders default to <EMAIL> <IP> <PHONE> <ID> <CARD> and can be
 * replaced per kind.
 *
 * Pure; an llm_pii is immutable after setup and may be shared by threads.
 */
#ifndef LLM_PII_H
#define LLM_PII_H

#include <stddef.h>

#include "core/buf.h"

enum {
	LLM_PII_EMAIL = 1u << 0,
	LLM_PII_IP = 1u << 1,
	LLM_PII_PHONE = 1u << 2,
	LLM_PII_ID_CN = 1u << 3,
	LLM_PII_CARD = 1u << 4,
	LLM_PII_ALL = 0x1F
};

typedef struct {
	unsigned kinds;
	const char *placeholder[5]; /* by bit index; NULL = default */
} llm_pii_opts;

/* Parse "email,ip,phone,id,card" / "all" into kinds (LLM_EINVAL on an unknown word). */
int llm_pii_parse(const char *list, unsigned *kinds);
/* Name of kind bit i ("email", ...). */
const char *llm_pii_name(int i);

/* Append s[0..n) to out with PII masked; counts[i] += matches of kind bit i (may be NULL).
 * Returns the number of masks. */
size_t llm_pii_mask(const char *s, size_t n, const llm_pii_opts *o, llm_buf *out,
                    size_t counts[5]);

#endif
