/*
 * fmt.c — fmt.h.
 *
 * %.15g first: a decimal of 15 significant digits or fewer always comes back from a double
 * (15 < 53 log10 2), so when a shorter form reads back, %.15g finds it with its trailing zeros
 * dropped; 16 and then 17 digits cover the rest (17 always reads back).
 */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

size_t llm_fmt_double(char *out, size_t cap, double x)
{
	int n;
	if (isnan(x))
		n = snprintf(out, cap, "nan");
	else if (isinf(x))
		n = snprintf(out, cap, x > 0 ? "inf" : "-inf");
	else
		for (int prec = 15;; prec++) {
			n = snprintf(out, cap, "%.*g", prec, x);
			if (prec == 17 || ((size_t)n < cap && strtod(out, NULL) == x))
				break;
		}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
