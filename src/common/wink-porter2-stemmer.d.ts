// Types for `wink-porter2-stemmer` (MIT, no dependencies; the Porter2 "English" Snowball stemmer): it ships none.
declare module 'wink-porter2-stemmer' {
  /** The Porter2 stem of one lowercase word ("allergies" → "allergi", "moving" → "move"). */
  function stem(word: string): string;
  export = stem;
}
