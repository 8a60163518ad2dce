#!/usr/bin/env node
// Throughput of Hugging Face tokenizers (Rust, via its Node binding) as BERT WordPiece, for
// comparison with `tisa-train tokenizer bench` (same lines, same ids). Not part of the build.
//
// Setup (outside the repo):  mkdir -p /tmp/hfbench && cd /tmp/hfbench && npm install tokenizers@0.23.2
// Run:  NODE_PATH=/tmp/hfbench/node_modules RAYON_NUM_THREADS=1 node scripts/bench/hf_wordpiece_bench.js \
//         --vocab VOCAB.txt --input FILE... [--lines-out LINES.txt] [--compare IDS.jsonl] [--min-seconds 2]
// Lines are read as tisa's bench reads them: BOM at a file start dropped, split on "\n", a trailing
// "\r" removed. --lines-out writes them (joined by "\n") so that `tisa-train tokenizer encode` can
// encode exactly the same lines; --compare checks the ids of that JSONL against the Rust ones.
// RAYON_NUM_THREADS=1 makes encodeBatch single-threaded; without it, it uses all cores.
'use strict';
const fs = require('fs');
const tk = require('tokenizers');

function parseArgs(argv) {
  const a = { input: [], minSeconds: 2 };
  for (let i = 2; i < argv.length; ++i) {
    const k = argv[i];
    if (k === '--vocab') a.vocab = argv[++i];
    else if (k === '--input') { while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) a.input.push(argv[++i]); }
    else if (k === '--lines-out') a.linesOut = argv[++i];
    else if (k === '--compare') a.compare = argv[++i];
    else if (k === '--min-seconds') a.minSeconds = Number(argv[++i]);
    else throw new Error('unknown argument ' + k);
  }
  if (!a.vocab || a.input.length === 0) throw new Error('need --vocab and --input');
  return a;
}

function readLines(files) {
  const lines = [];
  for (const f of files) {
    let text = fs.readFileSync(f, 'utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const parts = text.split('\n');
    if (parts.length && parts[parts.length - 1] === '') parts.pop();
    for (const p of parts) lines.push(p.endsWith('\r') ? p.slice(0, -1) : p);
  }
  return lines;
}

async function main() {
  const a = parseArgs(process.argv);
  const model = await tk.WordPiece.fromFile(a.vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100 });
  const tok = new tk.Tokenizer(model);
  tok.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true }));
  tok.setPreTokenizer(tk.bertPreTokenizer());
  tok.addSpecialTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  const lines = readLines(a.input);
  if (a.linesOut) fs.writeFileSync(a.linesOut, lines.join('\n') + '\n');
  const bytes = lines.reduce((s, l) => s + Buffer.byteLength(l, 'utf8'), 0);

  let encodings = await tok.encodeBatch(lines, { addSpecialTokens: false });  // warm-up
  const tokens = encodings.reduce((s, e) => s + e.getLength(), 0);
  let reps = 0;
  const t0 = process.hrtime.bigint();
  let seconds = 0;
  do {
    encodings = await tok.encodeBatch(lines, { addSpecialTokens: false });
    ++reps;
    seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (seconds < a.minSeconds);
  seconds /= reps;

  const result = {
    tokenizer: 'hf-tokenizers-' + require('tokenizers/package.json').version + ' WordPiece',
    rayon_threads: process.env.RAYON_NUM_THREADS || 'all',
    lines: lines.length, bytes, tokens, seconds,
    mb_per_s: bytes / 1e6 / seconds, tokens_per_s: tokens / seconds,
  };
  if (a.compare) {
    const ours = fs.readFileSync(a.compare, 'utf8').split('\n').filter((l) => l.length > 0);
    let same = 0;
    let firstDiff = null;
    for (let i = 0; i < lines.length; ++i) {
      const theirs = encodings[i].getIds();
      const mine = i < ours.length ? JSON.parse(ours[i]).ids : null;
      if (mine && mine.length === theirs.length && mine.every((v, k) => v === theirs[k])) ++same;
      else if (firstDiff === null) firstDiff = { line: i + 1, text: lines[i], rust: theirs, tisa: mine };
    }
    result.identical_lines = same;
    result.compared_lines = lines.length;
    if (firstDiff) result.first_difference = firstDiff;
  }
  console.log(JSON.stringify(result));
}

main().catch((e) => { console.error(e); process.exit(1); });
