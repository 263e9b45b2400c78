import { describe, expect, it } from 'vitest';
import { includeFilter } from '../../../src/core/tools/name-patterns.js';

describe('includeFilter', () => {
  const names = ['get_issue', 'get_user', 'search_code', 'create_issue', 'forget_me', 'get.dotted'];

  it('offers every tool when include is absent, and none when it is empty', () => {
    expect(names.filter(includeFilter(undefined))).toEqual(names);
    expect(names.filter(includeFilter([]))).toEqual([]);
  });

  it('matches exact names and * globs', () => {
    expect(names.filter(includeFilter(['get_*', 'create_issue']))).toEqual([
      'get_issue',
      'get_user',
      'create_issue',
    ]);
    expect(names.filter(includeFilter(['*_issue']))).toEqual(['get_issue', 'create_issue']);
    expect(names.filter(includeFilter(['*']))).toEqual(names);
    expect(names.filter(includeFilter(['s*h*']))).toEqual(['search_code']);
  });

  it('treats every other character literally and is case-sensitive', () => {
    expect(names.filter(includeFilter(['get.*']))).toEqual(['get.dotted']);
    expect(names.filter(includeFilter(['GET_*']))).toEqual([]);
    expect(names.filter(includeFilter(['get_issue?']))).toEqual([]);
  });
});
