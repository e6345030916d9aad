import { findTech, lookupTech } from './gazetteer';

const names = (text: string): string[] => findTech(text).map((h) => h.entry.name);

describe('gazetteer', () => {
  it('finds technologies in free text by name and alias, longest form first', () => {
    expect(names('We moved from MySQL to postgres on Arch Linux')).toEqual(['MySQL', 'PostgreSQL', 'Arch Linux']);
  });

  it('reads a name that is an ordinary word only as written, in free text', () => {
    // "the battery life is unreal" named Unreal Engine, and "It's a wonderful quality" then became
    // "Unreal Engine is a wonderful quality to have" through "it".
    expect(names('the battery life is unreal, like two weeks')).toEqual([]);
    expect(names('a spark of hope, a rabbit in the yard, an elastic band, ball of yarn, said in jest')).toEqual([]);
    expect(names('We render with Unreal and run Spark jobs on Elastic')).toEqual(['Unreal Engine', 'Apache Spark', 'Elasticsearch']);
  });

  it('looks such a name up case-insensitively where a usage rule already says it is a thing', () => {
    expect(lookupTech('yarn')?.name).toBe('Yarn');
    expect(lookupTech('unreal')?.name).toBe('Unreal Engine');
  });
});
