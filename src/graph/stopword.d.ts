// Types for the part of `stopword` (MIT, no dependencies) the keyword channels use: it ships none.
declare module 'stopword' {
  /** English stop words, lowercase. */
  export const eng: readonly string[];
}
