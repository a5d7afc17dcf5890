/*
 * fault.h — hooks for the fault-injection tests (tests/t/t0020-faults.sh), inert unless the
 * environment variable LLMKIT_FAULT asks for something. It is a comma-separated list of
 *   kill:POINT[:N]   die by SIGKILL the Nth time (default 1) the program reaches POINT
 *   no-o-tmpfile     create named temporaries even where O_TMPFILE works (tmpfile.h)
 * POINT names a place where llm_fault_point is called: a step between two writes whose
 * interruption the tests check (the list is in the fault suite). Cost without LLMKIT_FAULT: one
 * getenv per process. Thread safe.
 *
 * The tests have a second mechanism, tests/killat.c, and both are kept on purpose: killat is
 * a preload library that interposes rename(2) and write(2), so it stops a program at the
 * system calls themselves, in any code path and with no hook in the code: before the Nth
 * rename onto a name, once a byte count has gone to a file (a file cut mid-write, wherever
 * the write comes from), or paused on a FIFO there. LLMKIT_FAULT stops a program between
 * system calls, at points only the code knows (between the files of one commit, after a
 * shard is closed but before the next is opened), and its knobs change a code path
 * (no-o-tmpfile), neither of which interposition can see. Folding killat into this module
 * would need a hook in every write path of lib/ and would no longer catch the one that was
 * forgotten; folding these points into killat would lose them.
 */
#ifndef LLM_FAULT_H
#define LLM_FAULT_H

/* Die here by SIGKILL when LLMKIT_FAULT names this point (and this is its Nth arrival). */
void llm_fault_point(const char *point);
/* Whether LLMKIT_FAULT lists this knob ("no-o-tmpfile"). */
int llm_fault_knob(const char *knob);

#endif
