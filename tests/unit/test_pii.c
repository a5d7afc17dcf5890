/* test_pii.c — each PII kind, its checksum, and the word-boundary rule. */
#include "text/pii.h"

#include "core/err.h"
#include "unit.h"

static const char *mask(const char *in, unsigned kinds)
{
	static llm_buf out;
	llm_pii_opts o = { kinds, { NULL } };
	llm_buf_reset(&out);
	llm_pii_mask(in, strlen(in), &o, &out, NULL);
	return out.p ? out.p : "";
}

static void test_email(void)
{
	CHECK_STR(mask("mail john.doe+x@mail.example.co.uk, now", LLM_PII_ALL), "mail <EMAIL>, now");
	CHECK_STR(mask("a@b not-an-email@x", LLM_PII_ALL), "a@b not-an-email@x");
	CHECK_STR(mask("\xE9\x82\xAE\xE7\xAE\xB1zhang@163.com\xE3\x80\x82", LLM_PII_ALL),
	          "\xE9\x82\xAE\xE7\xAE\xB1<EMAIL>\xE3\x80\x82");
}

static void test_ip(void)
{
	CHECK_STR(mask("host 192.168.0.1, v6 2001:db8::8a2e:370:7334 and ::1.", LLM_PII_IP),
	          "host <IP>, v6 <IP> and <IP>.");
	CHECK_STR(mask("version 1.2.3.4.5 and 256.1.1.1 and 1.2.3", LLM_PII_IP),
	          "version 1.2.3.4.5 and 256.1.1.1 and 1.2.3");
	CHECK_STR(mask("at 12:30 or 10:20:30", LLM_PII_IP), "at 12:30 or 10:20:30");
}

static void test_phone(void)
{
	CHECK_STR(mask("call +1 (555) 123-4567 or +44 20 7946 0958.", LLM_PII_PHONE),
	          "call <PHONE> or <PHONE>.");
	CHECK_STR(mask("\xE7\x94\xB5\xE8\xAF\x9D" "13812345678\xEF\xBC\x8C+86 139 1234 5678", LLM_PII_PHONE),
	          "\xE7\x94\xB5\xE8\xAF\x9D" "<PHONE>\xEF\xBC\x8C" "<PHONE>");
	CHECK_STR(mask("(555) 234-5678 and 555-234-5678", LLM_PII_PHONE), "<PHONE> and <PHONE>");
	/* not phones: a short number, an 11-digit number that is not a mobile, part of a word */
	CHECK_STR(mask("+12 34, 12345678901, x13812345678", LLM_PII_PHONE),
	          "+12 34, 12345678901, x13812345678");
}

static void test_id_and_card(void)
{
	/* GB 11643 example number with a valid check character; the same with a wrong one */
	CHECK_STR(mask("ID 11010519491231002X ok", LLM_PII_ALL), "ID <ID> ok");
	CHECK_STR(mask("ID 110105194912310021 ok", LLM_PII_ID_CN), "ID 110105194912310021 ok");
	/* Luhn-valid test card numbers, grouped or not; an invalid one is left */
	CHECK_STR(mask("card 4111 1111 1111 1111 or 5500-0000-0000-0004, 4111111111111112",
	               LLM_PII_CARD),
	          "card <CARD> or <CARD>, 4111111111111112");
	llm_pii_opts o = { LLM_PII_CARD, { NULL } };
	o.placeholder[4] = "[CARD]";
	llm_buf out = LLM_BUF_INIT;
	size_t counts[5] = { 0 };
	CHECK_EQ_INT(llm_pii_mask("4111111111111111", 16, &o, &out, counts), 1);
	CHECK_STR(out.p, "[CARD]");
	CHECK_EQ_INT(counts[4], 1);
	llm_buf_release(&out);
}

static void test_parse(void)
{
	unsigned k;
	CHECK_EQ_INT(llm_pii_parse("email,card", &k), LLM_OK);
	CHECK_EQ_INT(k, LLM_PII_EMAIL | LLM_PII_CARD);
	CHECK_EQ_INT(llm_pii_parse("all", &k), LLM_OK);
	CHECK_EQ_INT(k, LLM_PII_ALL);
	CHECK_EQ_INT(llm_pii_parse("ssn", &k), LLM_EINVAL);
	CHECK_STR(mask("", LLM_PII_ALL), "");
}

int main(void)
{
	RUN(test_email);
	RUN(test_ip);
	RUN(test_phone);
	RUN(test_id_and_card);
	RUN(test_parse);
	return unit_done();
}
