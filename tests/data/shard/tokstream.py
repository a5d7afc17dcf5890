#!/usr/bin/env python3
"""Token streams for the llm-noise and llm-shard tests (llmkit-formats(5), TOKEN STREAM).

  tokstream.py gen [--docs N] [--vocab V] [--seed S] [--noised] [--eos ID] [--no-ids]
                   [--domains a,b] [--maxlen L] [--lenscale a:L,b:L] [--tid N]
                   [--plant ID]  (ID first in every document)
                                           a stream on stdout
  tokstream.py reverse IN                  the records of IN in reverse order, on stdout
  tokstream.py head IN K                   the header and the first K records, on stdout
  tokstream.py repeat IN K                 the header and K copies of all records, on stdout
  tokstream.py setmeta IN K META           IN with record K's (0-based) metadata replaced by META
  tokstream.py json IN                     one JSON line per record: meta, tokens, inputs
  tokstream.py sketch IN ALPHA             DDSketch per domain as llm-tokenize --stats saves it
  tokstream.py megatron PREFIX             documents of PREFIX.bin/.idx (Megatron layout) as JSON lines
  tokstream.py llmc FILE                   the tokens of an llm.c file as one JSON line
"""
import json
import math
import random
import struct
import sys


def read(path):
    data = open(path, 'rb').read() if path != '-' else sys.stdin.buffer.read()
    assert data[:8] == b'LLMTOK01', 'bad magic'
    version, width, vocab, flags, tid = struct.unpack_from('<IIIIQ', data, 8)
    fmt = '<%d' + ('H' if width == 2 else 'I')
    pos, recs = 32, []
    while pos < len(data):
        n, m = struct.unpack_from('<II', data, pos)
        pos += 8
        meta = data[pos:pos + m]
        pos += m
        toks = list(struct.unpack_from(fmt % n, data, pos))
        pos += n * width
        inputs = None
        if flags & 1:
            inputs = list(struct.unpack_from(fmt % n, data, pos))
            pos += n * width
        recs.append((meta, toks, inputs))
    return (version, width, vocab, flags, tid), recs


def write(hdr, recs):
    version, width, vocab, flags, tid = hdr
    out = [b'LLMTOK01', struct.pack('<IIIIQ', version, width, vocab, flags, tid)]
    c = 'H' if width == 2 else 'I'
    for meta, toks, inputs in recs:
        out.append(struct.pack('<II', len(toks), len(meta)) + meta)
        out.append(struct.pack('<%d%s' % (len(toks), c), *toks))
        if flags & 1:
            out.append(struct.pack('<%d%s' % (len(toks), c), *inputs))
    sys.stdout.buffer.write(b''.join(out))


def gen(args):
    opts = {'--docs': '1000', '--vocab': '50257', '--seed': '1', '--eos': '-1',
            '--domains': 'web,news,code', '--maxlen': '300', '--lenscale': '',
            '--tid': '4660', '--plant': '-1'}
    flags = set()
    i = 0
    while i < len(args):
        if args[i] in ('--noised', '--no-ids'):
            flags.add(args[i])
            i += 1
        else:
            opts[args[i]] = args[i + 1]
            i += 2
    rng = random.Random(int(opts['--seed']))
    vocab, eos = int(opts['--vocab']), int(opts['--eos'])
    doms = opts['--domains'].split(',')
    scale = dict((kv.split(':')[0], int(kv.split(':')[1]))
                 for kv in opts['--lenscale'].split(',') if kv)
    recs = []
    for d in range(int(opts['--docs'])):
        dom = doms[d % len(doms)]
        n = rng.randrange(scale.get(dom, int(opts['--maxlen'])))
        toks = [rng.randrange(vocab) for _ in range(n)]
        if int(opts['--plant']) >= 0:
            toks = [int(opts['--plant'])] + toks
        if eos >= 0:
            toks = [t if t != eos else 0 for t in toks]
            if d % 2 == 0:
                toks.append(eos)
        meta = {'domain': dom, 'weight': (d % 4) / 2}
        if '--no-ids' not in flags:
            meta = dict([('id', 'doc-%d' % d)] + list(meta.items()))
        inputs = [rng.randrange(vocab) for _ in toks] if '--noised' in flags else None
        recs.append((json.dumps(meta).encode(), toks, inputs))
    width = 2 if vocab <= 65536 else 4
    write((1, width, vocab, 1 if '--noised' in flags else 0, int(opts['--tid'])), recs)


def sketch(path, alpha):
    gamma = (1 + alpha) / (1 - alpha)
    per = {}
    for meta, toks, _ in read(path)[1]:
        per.setdefault(json.loads(meta).get('domain', 'unknown'), []).append(len(toks))
    out = {}
    for dom, lens in per.items():
        idx = [math.ceil(math.log(x) / math.log(gamma)) for x in lens if x > 0]
        lo = min(idx) if idx else 0
        bins = [0] * ((max(idx) - lo + 1) if idx else 0)
        for i in idx:
            bins[i - lo] += 1
        out[dom] = {'type': 'ddsketch', 'alpha': alpha, 'count': len(lens),
                    'zeros': lens.count(0), 'min': min(lens), 'max': max(lens),
                    'sum': sum(lens), 'offset': lo, 'bins': bins}
    print(json.dumps({'documents': len(lens), 'length_sketches': out}))


def megatron(prefix):
    idx = open(prefix + '.idx', 'rb').read()
    assert idx[:9] == b'MMIDIDX\x00\x00', 'bad .idx magic'
    version, code = struct.unpack_from('<QB', idx, 9)
    nseq, ndoc = struct.unpack_from('<QQ', idx, 18)
    assert version == 1 and code in (4, 8)
    pos = 34
    lens = struct.unpack_from('<%di' % nseq, idx, pos)
    pos += 4 * nseq
    ptrs = struct.unpack_from('<%dq' % nseq, idx, pos)
    pos += 8 * nseq
    docidx = struct.unpack_from('<%dq' % ndoc, idx, pos)
    assert pos + 8 * ndoc == len(idx), '.idx has trailing bytes'
    assert list(docidx) == list(range(ndoc)), 'document indices'
    data = open(prefix + '.bin', 'rb').read()
    item, c = (2, 'H') if code == 8 else (4, 'i')
    for n, p in zip(lens, ptrs):
        print(json.dumps(list(struct.unpack_from('<%d%s' % (n, c), data, p))))


def llmc(path):
    data = open(path, 'rb').read()
    magic, version, n = struct.unpack_from('<iii', data, 0)
    assert (magic, version) in ((20240520, 1), (20240801, 7)), 'bad llm.c header'
    c, item = ('H', 2) if version == 1 else ('I', 4)
    assert len(data) == 1024 + n * item, 'llm.c size'
    print(json.dumps(list(struct.unpack_from('<%d%s' % (n, c), data, 1024))))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'gen':
        gen(args)
    elif cmd == 'reverse':
        hdr, recs = read(args[0])
        write(hdr, recs[::-1])
    elif cmd == 'repeat':
        data = open(args[0], 'rb').read()
        sys.stdout.buffer.write(data[:32] + data[32:] * int(args[1]))
    elif cmd == 'head':
        hdr, recs = read(args[0])
        write(hdr, recs[:int(args[1])])
    elif cmd == 'setmeta':
        hdr, recs = read(args[0])
        k = int(args[1])
        recs[k] = (args[2].encode(), recs[k][1], recs[k][2])
        write(hdr, recs)
    elif cmd == 'json':
        for meta, toks, inputs in read(args[0])[1]:
            print(json.dumps({'meta': meta.decode(), 'tokens': toks, 'inputs': inputs}))
    elif cmd == 'sketch':
        sketch(args[0], float(args[1]))
    elif cmd == 'megatron':
        megatron(args[0])
    elif cmd == 'llmc':
        llmc(args[0])
    else:
        sys.exit('unknown command ' + cmd)


main()
