/**
 * The model's own tokenizer.json (BERT uncased WordPiece: BertNormalizer, BertPreTokenizer,
 * WordPiece, [CLS] … [SEP]) through Hugging Face's tokenizers.js, plus truncation, which
 * tokenizers.js leaves to the caller.
 */
import fs from 'node:fs';
import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };

// The package ships a CommonJS build (exports' "require" condition), but its one set of type
// declarations sits in a "type": "module" package, so TypeScript would only allow `import()`.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const { Tokenizer } = require('@huggingface/tokenizers') as { Tokenizer: typeof HfTokenizer };

/** Tokens beyond maxTokens that make a prefix's encoding safe to cut (see encode). */
const PREFIX_MARGIN = 128;

export class BertTokenizer {
  readonly clsId: number;
  readonly sepId: number;

  private constructor(private readonly tokenizer: HfTokenizer) {
    const id = (token: string): number => {
      const v = tokenizer.token_to_id(token);
      if (v === undefined) throw new Error(`tokenizer: vocabulary lacks ${token}`);
      return v;
    };
    this.clsId = id('[CLS]');
    this.sepId = id('[SEP]');
  }

  static fromFile(file: string): BertTokenizer {
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { model?: { type?: string } };
    if (json.model?.type !== 'WordPiece') throw new Error(`tokenizer: ${file} is not a WordPiece tokenizer (model ${json.model?.type})`);
    return new BertTokenizer(new Tokenizer(json, {}));
  }

  /** Token ids, [CLS] … [SEP], at most maxTokens of them (the text is cut, the [SEP] kept). */
  encode(text: string, maxTokens: number): number[] {
    // A long text (a whole document) is tokenized from a prefix when that already gives enough
    // tokens. Tokens come out left to right and only the word cut at the prefix's end can differ
    // (at most 100 pieces: longer words are [UNK]), so a margin beyond that keeps the result exact.
    const window = maxTokens * 8;
    if (text.length > window) {
      const head = this.tokenizer.encode(text.slice(0, window)).ids;
      if (head.length >= maxTokens + PREFIX_MARGIN) return this.truncate(head, maxTokens);
    }
    return this.truncate(this.tokenizer.encode(text).ids, maxTokens);
  }

  private truncate(ids: number[], maxTokens: number): number[] {
    if (ids.length <= maxTokens) return ids;
    return [...ids.slice(0, maxTokens - 1), this.sepId];
  }
}
