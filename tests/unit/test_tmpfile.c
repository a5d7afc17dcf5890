/*
 * test_tmpfile.c — temporary files and publishing (lib/core/tmpfile): named temporaries (as on
 * file systems without O_TMPFILE) are hidden, unpredictable and locked; publishing renames at
 * once or, deferred, at the commit; discarding removes; the cleaner removes only the
 * temporaries nobody holds, never a symlink or what it points to.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/tmpfile.h"
#include "unit.h"

static char dir[256];

static const char *at(const char *name)
{
	static char p[2][400];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

/* Entries of dir whose names contain s. */
static int count(const char *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, s) != NULL;
	closedir(d);
	return n;
}

/* The one temporary's name in dir, or "". */
static const char *tmp_name(void)
{
	static char name[300];
	name[0] = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".llmtmp."))
			snprintf(name, sizeof name, "%s", e->d_name);
	closedir(d);
	return name;
}

static void put(llm_tmpfile *t, const char *s)
{
	CHECK_EQ_INT(write(llm_tmpfile_fd(t), s, strlen(s)), (long long)strlen(s));
}

static int has(const char *name, const char *content)
{
	char buf[256] = { 0 };
	FILE *f = fopen(at(name), "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	return n == strlen(content) && memcmp(buf, content, n) == 0;
}

static void test_named_hidden_unpredictable(void)
{
	llm_tmpfile *a, *b;
	CHECK_EQ_INT(llm_tmpfile_open(&a, at("out.jsonl")), LLM_OK);
	char first[300];
	snprintf(first, sizeof first, "%s", tmp_name());
	CHECK(strncmp(first, ".out.jsonl.llmtmp.", 18) == 0 && strlen(first) == 18 + 12);
	CHECK_EQ_INT(llm_tmpfile_open(&b, at("out.jsonl")), LLM_OK);
	CHECK_EQ_INT(count(".out.jsonl.llmtmp."), 2); /* a second name, not the first one reused */
	llm_tmpfile_discard(a);
	llm_tmpfile_discard(b);
	CHECK_EQ_INT(count(".llmtmp."), 0);
	CHECK(strcmp(first, tmp_name()) != 0);
}

static void test_publish_now_and_deferred(void)
{
	llm_tmpfile *t;
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("now")), LLM_OK);
	put(t, "one");
	CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_OK);
	CHECK(has("now", "one"));
	llm_tmpfile_defer(1);
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("now")), LLM_OK);
	put(t, "two");
	CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_OK);
	CHECK(has("now", "one")); /* ready, not renamed yet */
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("later")), LLM_OK);
	put(t, "three");
	CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_OK);
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("at-once")), LLM_OK);
	put(t, "four");
	CHECK_EQ_INT(llm_tmpfile_publish(t, LLM_PUBLISH_NOW), LLM_OK);
	CHECK(has("at-once", "four"));
	CHECK_EQ_INT(llm_tmpfile_commit(), LLM_OK);
	CHECK(has("now", "two") && has("later", "three"));
	CHECK_EQ_INT(count(".llmtmp."), 0);
	/* a failed run: ready files are discarded and named */
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("now")), LLM_OK);
	put(t, "five");
	CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_OK);
	llm_tmpfile *open_one;
	CHECK_EQ_INT(llm_tmpfile_open(&open_one, at("unfinished")), LLM_OK);
	llm_buf names = LLM_BUF_INIT;
	llm_tmpfile_discard_all(&names);
	CHECK(names.p && strstr(names.p, "/now") && !strstr(names.p, "unfinished"));
	llm_buf_release(&names);
	CHECK(has("now", "two"));
	CHECK_EQ_INT(count(".llmtmp."), 0);
	CHECK_EQ_INT(count("unfinished"), 0);
	llm_tmpfile_defer(0);
}

/* A temporary left by a dead process (unlocked) goes; one a live writer holds stays; a
 * symlink named like a temporary stays, and so does what it points to. */
static void test_cleaner(void)
{
	llm_tmpfile *live;
	CHECK_EQ_INT(llm_tmpfile_open(&live, at("live")), LLM_OK);
	int fd = open(at(".dead.llmtmp.abcdefghijk1"), O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	fd = open(at("target"), O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	CHECK_EQ_INT(symlink("target", at(".link.llmtmp.abcdefghijk2")), 0);
	fd = open(at(".other.tmp.123"), O_CREAT | O_WRONLY, 0644); /* not our pattern */
	close(fd);
	llm_tmpfile_clean(dir);
	CHECK_EQ_INT(count(".dead.llmtmp."), 0);
	CHECK_EQ_INT(count(".live.llmtmp."), 1);
	CHECK_EQ_INT(count(".link.llmtmp."), 1);
	CHECK_EQ_INT(count(".other.tmp.123"), 1);
	CHECK(has("target", "keep"));
	llm_tmpfile_discard(live);
	unlink(at(".link.llmtmp.abcdefghijk2"));
	unlink(at(".other.tmp.123"));
	unlink(at("target"));
}

static void test_errors(void)
{
	llm_tmpfile *t;
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("no/such/dir/x")), LLM_EIO);
	CHECK(t == NULL);
	CHECK(strstr(llm_last_error(), "no/such/dir/x: cannot create a temporary file in") != NULL);
	/* a publish whose rename fails removes the temporary */
	CHECK_EQ_INT(mkdir(at("adir"), 0755), 0);
	CHECK_EQ_INT(mkdir(at("adir/sub"), 0755), 0);
	CHECK_EQ_INT(llm_tmpfile_open(&t, at("adir")), LLM_OK);
	CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_EIO);
	CHECK_EQ_INT(count(".llmtmp."), 0);
	rmdir(at("adir/sub"));
	rmdir(at("adir"));
}

/* More ready files than descriptors allow: those beyond the bound are renamed at once, and the
 * run goes on (runs last: it lowers the process's limit for good). */
static void test_descriptor_bound(void)
{
	struct rlimit rl = { 400, 400 };
	CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
	llm_tmpfile_defer(1); /* bound: 400 - 256 = 144 */
	for (int i = 0; i < 150; i++) {
		char name[32];
		snprintf(name, sizeof name, "many-%03d", i);
		llm_tmpfile *t;
		CHECK_EQ_INT(llm_tmpfile_open(&t, at(name)), LLM_OK);
		CHECK_EQ_INT(llm_tmpfile_publish(t, 0), LLM_OK);
	}
	CHECK_EQ_INT(count("many-"), 150); /* 144 temporaries and 6 files */
	CHECK_EQ_INT(count(".llmtmp."), 144);
	CHECK_EQ_INT(llm_tmpfile_commit(), LLM_OK);
	CHECK_EQ_INT(count(".llmtmp."), 0);
	CHECK_EQ_INT(count("many-"), 150);
	llm_tmpfile_defer(0);
}

int main(void)
{
	/* Named temporaries, as where O_TMPFILE is missing: the case with names to get right. */
	setenv("LLMKIT_FAULT", "no-o-tmpfile", 1);
	snprintf(dir, sizeof dir, "/tmp/test_tmpfile.%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	RUN(test_named_hidden_unpredictable);
	RUN(test_publish_now_and_deferred);
	RUN(test_cleaner);
	RUN(test_errors);
	RUN(test_descriptor_bound);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
