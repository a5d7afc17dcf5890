#!/usr/bin/env python3
"""MinHash peers of llm-dedup on the same documents (bench/dedup.sh runs this).

  dedup_peers.py datasketch FILE...          MinHash(112) per document + MinHashLSH inserts
  dedup_peers.py datatrove-sig FILE...       datatrove's MinhashDedupSignature shingling and
                                             signatures (14 x 8, 64-bit), without its disk I/O
  dedup_peers.py datatrove-run DIR FILE...   datatrove's four MinHash stages end to end
                                             (signature, buckets, cluster, filter), 1 task

Prints one JSON line: peer, MB of text, seconds, MB/s, peak RSS. Exits 3 when the peer is
not installed (the caller reports it as skipped).
"""
import json
import resource
import sys
import time


def texts(files):
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                try:
                    t = json.loads(line).get("text")
                except ValueError:
                    continue
                if isinstance(t, str):
                    yield t


def report(peer, nbytes, secs, **extra):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss = max(rss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    out = {"peer": peer, "mb": round(nbytes / 1e6, 2), "seconds": round(secs, 3),
           "mb_s": round(nbytes / 1e6 / secs, 2), "peak_rss_kb": rss}
    out.update(extra)
    print(json.dumps(out))


def run_datasketch(files):
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        sys.exit(3)
    docs = list(texts(files))
    nbytes = sum(len(t.encode()) for t in docs)
    t0 = time.process_time()
    sigs = []
    for t in docs:
        w = t.lower().split()
        m = MinHash(num_perm=112)
        m.update_batch([" ".join(w[i:i + 5]).encode() for i in range(max(1, len(w) - 4))])
        sigs.append(m)
    t1 = time.process_time()
    lsh = MinHashLSH(threshold=0.8, num_perm=112)
    dups = 0
    for i, m in enumerate(sigs):
        if lsh.query(m):
            dups += 1
        lsh.insert(str(i), m)
    t2 = time.process_time()
    report("datasketch-signature", nbytes, t1 - t0)
    report("datasketch-run", nbytes, t2 - t0, duplicates=dups)


def run_datatrove_sig(files):
    try:
        from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
        from datatrove.utils.hashing import HashConfig
    except ImportError:
        sys.exit(3)
    cfg = MinhashConfig(hash_config=HashConfig(precision=64))
    step = MinhashDedupSignature(output_folder="/tmp/dedup_peers_unused", config=cfg)
    docs = list(texts(files))
    nbytes = sum(len(t.encode()) for t in docs)
    t0 = time.process_time()
    for t in docs:
        sh = step.get_shingles(t)
        if sh.size:
            step.get_signature(sh)
    report("datatrove-signature", nbytes, time.process_time() - t0)


def run_datatrove_full(work, files):
    try:
        from datatrove.executor.local import LocalPipelineExecutor
        from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets,
                                                      MinhashDedupCluster, MinhashDedupFilter,
                                                      MinhashDedupSignature)
        from datatrove.pipeline.readers import JsonlReader
        from datatrove.pipeline.writers import JsonlWriter
        from datatrove.utils.hashing import HashConfig
    except ImportError:
        sys.exit(3)
    import os
    import shutil
    nbytes = sum(len(t.encode()) for t in texts(files))
    inp = os.path.join(work, "in")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(inp)
    for f in files:
        shutil.copy(f, inp)
    cfg = MinhashConfig(hash_config=HashConfig(precision=64))
    reader = lambda: JsonlReader(inp, id_key="id")  # noqa: E731
    stages = [
        [reader(), MinhashDedupSignature(output_folder=f"{work}/sigs", config=cfg)],
        [MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=cfg)],
        [MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=cfg)],
        [reader(), MinhashDedupFilter(input_folder=f"{work}/remove"), JsonlWriter(f"{work}/out")],
    ]
    t0 = time.process_time()
    sig_s = None
    for i, pipe in enumerate(stages):
        tasks = cfg.num_buckets if i == 1 else 1  # the bucket stage needs a task per bucket
        LocalPipelineExecutor(pipeline=pipe, tasks=tasks, workers=1,
                              logging_dir=f"{work}/logs/{i}", skip_completed=False).run()
        if i == 0:
            sig_s = time.process_time() - t0
    report("datatrove-run", nbytes, time.process_time() - t0, signature_stage_s=round(sig_s, 3))


def main():
    mode = sys.argv[1]
    if mode == "datasketch":
        run_datasketch(sys.argv[2:])
    elif mode == "datatrove-sig":
        run_datatrove_sig(sys.argv[2:])
    elif mode == "datatrove-run":
        run_datatrove_full(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
