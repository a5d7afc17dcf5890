/* lib/text/fineweb2.h: written by scripts/fineweb2-langs.py from the configs in lib/text/fineweb2
 * (FineWeb-2's configs, Apache-2.0); do not edit, run the script. One entry per language,
 * in the order of LLM_FW2_LANGS. */
#ifndef LLM_TEXT_FINEWEB2_H
#define LLM_TEXT_FINEWEB2_H

#define LLM_FW2_NLANGS 15

/* X(name, iso1, alias): name is LANG_Script, iso1 the two-letter code, alias another tag */
#define LLM_FW2_LANGS(X) \
	X(arb_Arab, "ar", "ara") \
	X(cmn_Hani, "zh", "zho") \
	X(deu_Latn, "de", "") \
	X(fra_Latn, "fr", "") \
	X(ind_Latn, "id", "") \
	X(ita_Latn, "it", "") \
	X(jpn_Jpan, "ja", "") \
	X(kor_Hang, "ko", "") \
	X(nld_Latn, "nl", "") \
	X(pol_Latn, "pl", "") \
	X(por_Latn, "pt", "") \
	X(rus_Cyrl, "ru", "") \
	X(spa_Latn, "es", "") \
	X(tur_Latn, "tr", "") \
	X(vie_Latn, "vi", "") \

#define LLM_FW2_ALL(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x

#define LLM_FW2_dup_line_frac 0.304, 0.287, 0.263, 0.264, 0.241, 0.246, 0.328, 0.374, 0.296, \
	0.32, 0.287, 0.322, 0.252, 0.272, 0.293
#define LLM_FW2_line_punct_thr 0.143, 0.106, 0.0, 0.1, 0.111, 0.025, 0.096, 0.062, 0.102, 0.087, \
	0.077, 0.231, 0.182, 0.091, 0.333
#define LLM_FW2_max_avg_word_length 9, 5, 15, 11, 12, 21, 6, 6, 17, 12, 13, 11, 14, 21, 11
#define LLM_FW2_min_avg_word_length 2, 1, 0, 2, 3, 3, 1, 1, 3, 3, 3, 3, 3, 3, 3
#define LLM_FW2_max_non_alpha_words_ratio 0.787, 0.735, 0.774, 0.812, 0.805, 0.807, 0.759, \
	0.791, 0.828, 0.726, 0.814, 0.713, 0.825, 0.773, 0.803
#define LLM_FW2_new_line_ratio 0.189, 0.178, 0.152, 0.185, 0.157, 0.2, 0.13, 0.196, 0.154, \
	0.158, 0.186, 0.139, 0.138, 0.222, 0.103
#define LLM_FW2_top_n_grams_2 0.197, 0.256, 0.169, 0.161, 0.194, 0.198, 0.239, 0.282, 0.213, \
	0.222, 0.371, 0.184, 0.156, 0.214, 0.223
#define LLM_FW2_top_n_grams_3 0.172, 0.201, 0.153, 0.149, 0.166, 0.156, 0.196, 0.228, 0.182, \
	0.198, 0.191, 0.164, 0.14, 0.168, 0.197
#define LLM_FW2_top_n_grams_4 0.146, 0.171, 0.137, 0.134, 0.145, 0.133, 0.172, 0.185, 0.158, \
	0.176, 0.163, 0.146, 0.125, 0.147, 0.171
#define LLM_FW2_dup_n_grams_5 0.165, 0.198, 0.141, 0.15, 0.166, 0.144, 0.243, 0.201, 0.156, \
	0.172, 0.163, 0.168, 0.145, 0.154, 0.178
#define LLM_FW2_dup_n_grams_6 0.153, 0.182, 0.134, 0.141, 0.155, 0.136, 0.225, 0.184, 0.146, \
	0.16, 0.153, 0.156, 0.136, 0.144, 0.163
#define LLM_FW2_dup_n_grams_7 0.142, 0.167, 0.126, 0.131, 0.144, 0.127, 0.207, 0.168, 0.136, \
	0.148, 0.141, 0.145, 0.127, 0.134, 0.15
#define LLM_FW2_dup_n_grams_8 0.131, 0.154, 0.117, 0.121, 0.133, 0.118, 0.19, 0.154, 0.126, \
	0.136, 0.13, 0.133, 0.117, 0.124, 0.136
#define LLM_FW2_dup_n_grams_9 0.12, 0.14, 0.108, 0.111, 0.122, 0.109, 0.175, 0.14, 0.115, 0.123, \
	0.119, 0.121, 0.108, 0.113, 0.124
#define LLM_FW2_dup_n_grams_10 0.109, 0.127, 0.098, 0.1, 0.111, 0.1, 0.159, 0.127, 0.104, 0.111, \
	0.108, 0.109, 0.099, 0.103, 0.111

#define LLM_FW2_STOP_arb_Arab "\u060C", "\u0641\u064A", "\u0645\u0646", "\u0639\u0644\u0649", \
	"\u0625\u0644\u0649", "\u0639\u0627\u0645", "\u0623\u0646", "\u0645\u0639", "\u0623\u0648", \
	"\u0647\u0648", "\u0639\u0646", "\u0627\u0644\u062A\u064A", "\u0643\u0627\u0646", \
	"\u0628\u064A\u0646", "\u0645\u0627", "\u0643\u0627\u0646\u062A", "\u0647\u064A", \
	"\u0627\u0644\u0645\u062A\u062D\u062F\u0629", "\u0628\u0639\u062F"
#define LLM_FW2_STOP_cmn_Hani "\u7684", "\u5E74", "\u5728", "\u6708", "\u662F", "\u548C", \
	"\u65E5", "\u4E86", "\u65BC", "\u00B7", "\u70BA", "\u6709", "\u88AB", "\u4EBA", "\u4E2D", \
	"\u4E3A", "\u4ED6", "\u8207", "\u5F8C", "\u4E5F", "\u800C", "\u7531"
#define LLM_FW2_STOP_deu_Latn "der", "und", "die", "in", "von", "im", "den", "des", "mit", \
	"das", "er", "dem", "als", "wurde", "f\u00FCr"
#define LLM_FW2_STOP_fra_Latn "de", "la", "le", "et", "\u00E0", "en", "l'", "des", "du", "les", \
	"est", "d'", "un", "une", "il", "dans", "par", "au"
#define LLM_FW2_STOP_ind_Latn "dan", "yang", "di", "pada", "dari", "ini", "dengan", "adalah", \
	"untuk", "dalam"
#define LLM_FW2_STOP_ita_Latn "di", "e", "il", "la", "in", "a", "del", "che", "\u00E8", "della", \
	"un", "per", "nel", "l'", "con", "da", "i", "una"
#define LLM_FW2_STOP_jpn_Jpan "\u306E", "\u306B", "\u3092", "\u306F", "\u305F", "\u3066", \
	"\u304C", "\u3068", "\u3067", "\u5E74", "\u3057", "\u30FB", "\u6708", "\u308C", "\u3055"
#define LLM_FW2_STOP_kor_Hang "\uC758", "\uB2E4", "\uC774", "\uB294", "\uC5D0", "\uC744", \
	"\uD55C", "\uB144", "\uD558", "\uC740", "\uB97C", "\uD588", "\uACE0", "\uC5D0\uC11C", "\uAC00", \
	"\uC788", "\uC73C\uB85C", "\uC778", "\uC6D4", "\uB85C", "\uB418"
#define LLM_FW2_STOP_nld_Latn "de", "van", "in", "het", "een", "en", "is", "op", "voor", "met", \
	"door", "zijn", "werd", "hij", "uit"
#define LLM_FW2_STOP_pol_Latn "w", "i", "na", "z", "do", "si\u0119", "roku", "od", "a", "jest", \
	"przez", "po", "jako", "oraz", "o", "zosta\u0142", "by\u0142", "nie"
#define LLM_FW2_STOP_por_Latn "de", "a", "e", "o", "em", "do", "da", "que", "um", "no", "uma", \
	"com", "para", "na", "\u00E9", "foi"
#define LLM_FW2_STOP_rus_Cyrl "\u0432", "\u0438", "\u043D\u0430", "\u0441", \
	"\u0433\u043E\u0434\u0430", "\u043F\u043E", "\u0433\u043E\u0434\u0443", "\u0438\u0437", \
	"\u0431\u044B\u043B", "\u043A", "\u043D\u0435", "\u043E\u0442", "\u0447\u0442\u043E", \
	"\u0437\u0430", "\u0434\u043B\u044F", "\u0435\u0433\u043E", "\u043A\u0430\u043A", "\u0430", \
	"\u043E\u043D", "\u0442\u0430\u043A\u0436\u0435", "\u0434\u043E", \
	"\u043F\u043E\u0441\u043B\u0435"
#define LLM_FW2_STOP_spa_Latn "de", "la", "en", "el", "y", "a", "que", "del", "los", "se", \
	"por", "un", "con", "una", "las", "su"
#define LLM_FW2_STOP_tur_Latn "ve", "bir", "olarak", "bu", "ile", "i\u00E7in", "olan", "da", \
	"de", "taraf\u0131ndan", "y\u0131l\u0131nda", "sonra", "en", "daha", "ilk", "the"
#define LLM_FW2_STOP_vie_Latn "l\u00E0", "v\u00E0", "c\u1EE7a", "m\u1ED9t", \
	"\u0111\u01B0\u1EE3c", "trong", "n\u0103m", "c\u00E1c", "c\u00F3", "lo\u00E0i", "n\u00E0y", \
	"\u0111\u00E3", "ng\u01B0\u1EDDi"

#endif
