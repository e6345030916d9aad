// Types for the two wink packages the recall baseline uses (they ship none).
declare module 'wink-bm25-text-search' {
  type PrepTask = (input: never) => unknown;
  interface Bm25Engine {
    defineConfig(config: { fldWeights: Record<string, number>; bm25Params?: { k1?: number; b?: number; k?: number } }): boolean;
    definePrepTasks(tasks: PrepTask[], field?: string): number;
    addDoc(doc: Record<string, string>, id: string | number): number;
    consolidate(fp?: number): boolean;
    search(text: string, limit?: number): Array<[string | number, number]>;
  }
  function bm25(): Bm25Engine;
  export default bm25;
}

declare module 'wink-nlp-utils' {
  type Task = (input: never) => unknown;
  const nlp: {
    string: { lowerCase: Task; tokenize0: Task };
    tokens: { removeWords: Task; stem: Task; propagateNegations: Task };
  };
  export default nlp;
}
