/* fuzz_pubdate.c — publication dates on arbitrary bytes: no crash, no read past the page or
 * the URL, and every date given is a well-formed calendar day. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/pubdate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *d)
{
	for (int i = 0; i < 10; i++)
		if ((i == 4 || i == 7) ? d[i] != '-' : (d[i] < '0' || d[i] > '9'))
			abort();
	if (d[10] != 0 || memcmp(d, "1990", 4) < 0 || memcmp(d, "2099", 4) > 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the first byte splits the input into a URL and a page; both copied so that reads past
	 * the end are caught by the sanitizers */
	size_t ul = size ? data[0] % (size) : 0;
	const uint8_t *rest = size ? data + 1 : data;
	size_t n = size ? size - 1 : 0;
	if (ul > n)
		ul = n;
	char *url = malloc(ul ? ul : 1), *page = malloc(n - ul ? n - ul : 1);
	memcpy(url, rest, ul);
	memcpy(page, rest + ul, n - ul);
	char out[11];
	if (llm_pubdate_find(page, n - ul, url, ul, out))
		check(out);
	if (llm_pubdate_parse(page, n - ul, out))
		check(out);
	free(url);
	free(page);
	return 0;
}
