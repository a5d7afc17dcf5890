/*
 * dataset.h — a dataset directory: DIR/manifest.json and the generation of shards it names,
 * replaced as one (llm-shard(1) "Replacing a dataset").
 *
 * DIR/manifest.json is the dataset: it names its shards, all in one generation directory
 * DIR/gen-N. A new dataset is written into a new generation, which no manifest names until
 * its own manifest is renamed over the old one: that one rename switches every shard at
 * once, so a reader sees the old dataset or the new one, whole, at any moment of a run that
 * is killed, fails or runs out of disk. Then the generations the new manifest does not name
 * go, and with them the shards of the flat layout of earlier versions (DIR/train-00000.bin).
 *
 * The life of a run that writes a dataset:
 *   llm_dataset_open       lock DIR, read the old manifest, clear what unfinished runs left,
 *                          make the new, empty generation (ds->name)
 *   ... write shards into DIR/ds->name and a new DIR/manifest.json (its rename switches) ...
 *   llm_dataset_retire_old once the new manifest is in place: the old dataset's files go
 *   llm_dataset_abandon    instead, when the run failed: its generation goes, the old stays
 *   llm_dataset_close      always: the lock is released
 *
 * The lock is flock(2) on DIR, held from open to close: a second writer is refused at once,
 * never waited for. Removal never follows a link and never leaves DIR: entries are removed
 * by unlinkat relative to the directory they are in, only regular files and links inside
 * generation directories, and at the top only files that are shards (by their magic) of the
 * flat layout. Removal is best effort: what cannot be removed stays (a warning where it
 * matters) and is cleared by the next run, since no manifest names it.
 * Not thread-safe: one run owns one llm_dataset.
 */
#ifndef LLM_DATASET_H
#define LLM_DATASET_H

#include "shard.h"

/* Caller-owned: llm_dataset_open / llm_dataset_close. */
typedef struct {
	const char *dir;  /* as given to llm_dataset_open, not copied */
	int fd;           /* DIR, locked */
	unsigned gen;     /* the generation this run writes */
	char name[32];    /* "gen-N": the shards' directory, relative to DIR */
	llm_manifest old; /* the dataset before this run (no shards when none) */
	int old_known;    /* the old manifest was read, or there was none */
} llm_dataset;

/*
 * Lock dir (an existing directory), read the dataset there, remove the generations no
 * manifest names (when the manifest could be read: one that cannot is warned about and its
 * directory left alone), and make generation N + 1 of the highest N present.
 * LLM_EIO "DIR: reason", or "DIR: another llm-shard is writing this dataset" when the lock
 * is held; nothing is held on failure.
 */
int llm_dataset_open(llm_dataset *ds, const char *dir);
/* The run failed: remove its generation. The old dataset stays as it was. */
void llm_dataset_abandon(llm_dataset *ds);
/* The new manifest is in place: remove every other generation and the flat layout's shards. */
void llm_dataset_retire_old(llm_dataset *ds);
/* Release the lock and the old manifest. */
void llm_dataset_close(llm_dataset *ds);

#endif
