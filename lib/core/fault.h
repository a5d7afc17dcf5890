/*
 * fault.h — hooks for the fault-injection tests (tests/t/t0020-faults.sh), inert unless the
 * environment variable LLMKIT_FAULT asks for something. It is a comma-separated list of
 *   kill:POINT[:N]   die by SIGKILL the Nth time (default 1) the program reaches POINT
 *   no-o-tmpfile     create named temporaries even where O_TMPFILE works (tmpfile.h)
 * POINT names a place where llm_fault_point is called: a step between two writes whose
 * interruption the tests check (the list is in the fault suite). Cost without LLMKIT_FAULT: one
 * getenv per process. Thread safe.
 */
#ifndef LLM_FAULT_H
#define LLM_FAULT_H

/* Die here by SIGKILL when LLMKIT_FAULT names this point (and this is its Nth arrival). */
void llm_fault_point(const char *point);
/* Whether LLMKIT_FAULT lists this knob ("no-o-tmpfile"). */
int llm_fault_knob(const char *knob);

#endif
