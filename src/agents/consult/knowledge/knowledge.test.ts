import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { rejectionOf } from '../../../testing/error-of.js';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../core/db/connect.js';
import { hasVectorStore } from '../../../core/db/migrate.js';
import type { Embedder } from '../../../core/embeddings.js';
import { ClinAgentError } from '../../../core/errors.js';
import { createToolRegistry } from '../../../core/tools/registry.js';
import { createLocalEmbedder, createRagStore, type RagStore } from '../../../rag/index.js';
import { openTestDatabase, testEngines } from '../../../testing/test-database.js';
import { knowledgeFolder, loadKnowledgeArticles } from './articles.js';
import { ingestConsultKnowledge } from './ingest.js';
import { createMedicalKnowledgeTool, type KnowledgePassage } from './tool.js';

const TINEA = 'Tinea (ringworm): tinea corporis and tinea pedis 体癣与足癣（癣）';
const MELANOMA = 'Melanoma and the ABCDE rule 黑色素瘤与ABCDE法则';
const ECZEMA = 'Atopic dermatitis (eczema) 特应性皮炎（湿疹）';

/** The local embedder, counting the texts it embeds: an unchanged article must cost no embedding. */
function countingEmbedder(): Embedder & { texts: number } {
  const inner = createLocalEmbedder();
  const embedder = {
    model: inner.model,
    dimension: inner.dimension,
    texts: 0,
    async embed(texts: string[]) {
      embedder.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return embedder;
}

type SearchResult = { query: string; specialty: string; results: KnowledgePassage[] };

describe('the shipped dermatology knowledge base', () => {
  it('has 16 articles, each with a bilingual title, a Source line and the sections a consult needs', async () => {
    const articles = await loadKnowledgeArticles('dermatology');

    expect(articles).toHaveLength(16);
    for (const article of articles) {
      expect(article.title, article.sourceFile).toMatch(/[A-Za-z].*[\u4e00-\u9fff]/);
      expect(article.source, article.sourceFile).toMatch(/DermNet|NICE|BAD|AAD|British Association of Dermatologists|American Academy of Dermatology/);
      const text = await readFile(path.join(knowledgeFolder('dermatology'), article.sourceFile), 'utf8');
      for (const heading of ['## Typical features', '## Where and who', '## Red flags', '## First-line management', '## When to refer']) expect(text, `${article.sourceFile} ${heading}`).toContain(heading);
      expect(text, article.sourceFile).toMatch(/^## (Differentials|How to tell them apart)$/m);
      const words = text.split(/\s+/).filter((word) => /[A-Za-z]/.test(word)).length;
      expect(words, article.sourceFile).toBeGreaterThanOrEqual(250);
      expect(words, article.sourceFile).toBeLessThanOrEqual(420);
      // Every passage names its condition, and none carries the Source line (it is answered beside the text).
      for (const section of article.sections) {
        expect(section.text.startsWith(`# ${article.title}\n\n`)).toBe(true);
        expect(section.text).not.toContain('Source:');
      }
    }
  });

  it('refuses an article without a Source line, naming the file', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'clinagent-knowledge-'));
    try {
      await writeFile(path.join(folder, 'orphan.md'), '# Orphan 孤儿\n\n## Typical features\nNo source given.\n');
      const error = await rejectionOf(loadKnowledgeArticles('dermatology', folder));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toBe(`Knowledge article ${path.join(folder, 'orphan.md')} has no "Source: ..." line. Every article needs a title and a Source line naming where its facts come from.`);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

// Vector search runs on PGlite, which always has pgvector (the PostgreSQL test server may not; see below).
describe('search_medical_knowledge on PGlite', () => {
  let database: Database;
  let rag: RagStore;
  const embedder = countingEmbedder();
  let search: (args: Record<string, unknown>) => Promise<SearchResult>;

  beforeAll(async () => {
    database = await openTestDatabase({ engine: 'pglite' });
    rag = createRagStore({ db: database.db, embedder });
    await ingestConsultKnowledge(rag);
    const tool = createMedicalKnowledgeTool(rag);
    search = async (args) => (await tool.run(tool.schema.parse(args))) as SearchResult;
  }, 120_000);

  afterAll(async () => {
    await database?.close();
  });

  it('finds the tinea article for an itchy ring-shaped rash with scaling, with its title and source', async () => {
    const { results, specialty } = await search({ query: 'itchy ring-shaped rash with scaling' });

    expect(specialty).toBe('dermatology');
    const tinea = results.find((result) => result.title === TINEA);
    expect(tinea).toBeDefined();
    expect(tinea!.source).toContain('NICE CKS "Fungal skin infection – body and groin"');
    expect(tinea!.text).toContain('ring-shaped');
    expect(results.length).toBeLessThanOrEqual(4);
    expect(results.map((result) => result.score)).toEqual([...results.map((result) => result.score)].sort((a, b) => b - a));
  });

  it('answers a changing mole with the melanoma article first', async () => {
    const { results } = await search({ query: 'a mole that is changing in size and colour' });

    expect(results[0]).toMatchObject({ title: MELANOMA, source: expect.stringContaining('ABCDEs of melanoma') });
    expect(results[0]!.text).toContain('evolving');
  });

  it('answers a Chinese query with the article in Chinese terms first: 湿疹 is eczema', async () => {
    const { results } = await search({ query: '湿疹', specialty: '皮肤科' });

    expect(results[0]!.title).toBe(ECZEMA);
    expect(results[0]!.text).toContain('湿疹');
    // At most two passages of one article, so the differentials have room.
    expect(results.filter((result) => result.title === ECZEMA).length).toBeLessThanOrEqual(2);
  });

  it('refuses a specialty it has no knowledge base for, saying what exists', async () => {
    const registry = createToolRegistry();
    registry.register(createMedicalKnowledgeTool(rag));

    const result = await registry.run('search_medical_knowledge', { query: 'chest pain', specialty: 'cardiology' });

    expect(result.success).toBe(false);
    expect(result.error).toContain('There is no "cardiology" knowledge base: only dermatology (皮肤科) is available.');
  });

  it('re-embeds nothing when run again, only a changed section, and drops an article no longer shipped', async () => {
    const before = embedder.texts;
    const again = await ingestConsultKnowledge(rag);
    expect(again.documents.every((document) => document.unchanged)).toBe(true);
    expect(again.removed).toEqual([]);
    expect(embedder.texts).toBe(before);

    const folder = await mkdtemp(path.join(os.tmpdir(), 'clinagent-knowledge-'));
    try {
      await cp(knowledgeFolder('dermatology'), folder, { recursive: true });
      await rm(path.join(folder, 'rosacea.md'));
      const acne = path.join(folder, 'acne.md');
      await writeFile(acne, (await readFile(acne, 'utf8')).replace('## When to refer\n', '## When to refer\nAlso refer anyone whose acne started after a new medicine.\n'));

      const changed = await ingestConsultKnowledge(rag, { folder });

      expect(changed.documents.filter((document) => !document.unchanged).map((document) => document.documentId)).toEqual(['consult-dermatology--acne.md:6']);
      expect(embedder.texts).toBe(before + 1);
      expect(changed.removed).toEqual(expect.arrayContaining(['consult-dermatology--rosacea.md:0', 'consult-dermatology--rosacea.md:6']));
      expect(changed.removed).toHaveLength(7);
      const rosacea = await createMedicalKnowledgeTool(rag, { folder }).run({ query: 'flushing redness of the cheeks and nose', specialty: 'dermatology' });
      expect(JSON.stringify(rosacea)).not.toContain('Rosacea');
    } finally {
      await rm(folder, { recursive: true, force: true });
      await ingestConsultKnowledge(rag);
    }
  });
});

describe('search_medical_knowledge without a usable store', () => {
  it('says the knowledge base is unavailable on a database without pgvector, and to continue without it', async () => {
    const unavailable: RagStore = {
      ingestDocument: () => Promise.reject(new ClinAgentError('VECTOR_STORE_UNAVAILABLE', 'no pgvector')),
      retrieve: () => Promise.reject(new ClinAgentError('VECTOR_STORE_UNAVAILABLE', 'This PostgreSQL database has no pgvector extension, so RAG is unavailable.')),
      deleteDocument: () => Promise.reject(new Error('not used')),
      listDocuments: () => Promise.reject(new Error('not used')),
      getDocument: () => Promise.reject(new Error('not used')),
      indexScope: () => Promise.reject(new Error('not used')),
      indexStatus: () => Promise.reject(new Error('not used')),
    };
    const error = await rejectionOf(createMedicalKnowledgeTool(unavailable).run({ query: 'itchy rash', specialty: 'dermatology' }));

    expect(error.code).toBe('VECTOR_STORE_UNAVAILABLE');
    expect(error.message).toBe(
      "The medical knowledge base cannot be searched on this server: its database has no vector store (pgvector). Continue the consult without it, from the patient's answers; do not search it again in this consult.",
    );
  });

  it('says the knowledge base is empty when nothing was ingested yet', async () => {
    const database = await openTestDatabase({ engine: 'pglite' });
    try {
      const error = await rejectionOf(createMedicalKnowledgeTool(createRagStore({ db: database.db, embedder: createLocalEmbedder() })).run({ query: 'itchy rash', specialty: 'dermatology' }));
      expect(error.code).toBe('NOT_FOUND');
      expect(error.message).toContain('The dermatology knowledge base has no articles on this server yet');
    } finally {
      await database.close();
    }
  });
});

// On the PostgreSQL test server when there is one (CI sets TEST_DATABASE_URL); nothing is reported skipped without it.
describe.each(testEngines().filter((engine) => engine === 'postgres'))('search_medical_knowledge on the %s test server', () => {
  it('searches when the server has pgvector, and says the knowledge base is unavailable when it has not', async () => {
    const database = await openTestDatabase({ engine: 'postgres' });
    try {
      const rag = createRagStore({ db: database.db, embedder: createLocalEmbedder() });
      const tool = createMedicalKnowledgeTool(rag);
      if (await hasVectorStore(database.db)) {
        await ingestConsultKnowledge(rag);
        const { results } = (await tool.run({ query: 'a mole that is changing in size and colour', specialty: 'dermatology' })) as SearchResult;
        expect(results[0]!.title).toBe(MELANOMA);
      } else {
        await expect(ingestConsultKnowledge(rag)).rejects.toMatchObject({ code: 'VECTOR_STORE_UNAVAILABLE' });
        await expect(tool.run({ query: 'itchy rash', specialty: 'dermatology' })).rejects.toMatchObject({ code: 'VECTOR_STORE_UNAVAILABLE', message: expect.stringContaining('Continue the consult without it') });
      }
    } finally {
      await database.close();
    }
  }, 120_000);
});
