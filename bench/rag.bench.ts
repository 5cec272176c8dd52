import { pathToFileURL } from 'node:url';
import { openDatabase, queryRows, sql, type Database, type Db } from '../src/core/db/connect.js';
import { runMigrations } from '../src/core/db/migrate.js';
import { TEST_AUDIT_KEY } from '../src/testing/test-database.js';
import { chunkText, createLocalEmbedder, createRagStore, type Embedder, type RagStore } from '../src/rag/index.js';
import * as q from '../src/rag/rag-sql.js';
import { efSearchFor } from '../src/rag/rag-store.js';
import { collectionIndexName, vectorShape } from '../src/rag/vector-sql.js';
import { printTable, summarise } from './stats.js';
import { withTransaction } from '../src/core/db/transaction.js';

/**
 * RAG throughput, latency and recall on in-memory PGlite with the offline local embedder (256-d):
 * - ingest: chunking + embedding alone, and end-to-end ingestDocument (HNSW maintained on every insert);
 * - for each size (RAG_BENCH_SIZES, default 10000,100000): a bulk load through the store's batched INSERT,
 *   the first-use HNSW build, retrieve() latency for a large and a small scenario, and recall@10 of
 *   retrieve() against an exact scan of the same scope, so fast answers are also shown to be right.
 * The corpus is synthetic protocol text, mixed Chinese and English, from a seeded generator.
 */
const SIZES = (process.env.RAG_BENCH_SIZES ?? '10000,100000').split(',').map(Number).filter((n) => n > 0);
const E2E_CHUNKS = Number(process.env.RAG_BENCH_INGEST_CHUNKS ?? 2000);
const TOP_K = 10;
const LATENCY_QUERIES = 200;
const RECALL_QUERIES = 40;
const COLLECTION = 'bench';
/** Three trials share the collection; searches are filtered to one, as in the product. */
const SCENARIOS = [
  { id: 'trial-a', share: 0.6 },
  { id: 'trial-b', share: 0.3 },
  { id: 'trial-c', share: 0.1 },
];

/** Progress on stderr, so a run of several minutes shows where it is without cluttering the tables. */
const progress = (message: string) => process.stderr.write(`[rag bench] ${message}\n`);

export async function main(): Promise<void> {
  const embedder = createLocalEmbedder();
  const ingestRows: Array<Record<string, string | number>> = [];
  const searchRows: Array<Record<string, string | number>> = [];

  progress('chunking and embedding');
  ingestRows.push(await measureChunkAndEmbed(embedder));
  progress(`ingestDocument end to end, ${E2E_CHUNKS} chunks`);
  ingestRows.push(await measureEndToEndIngest(embedder));
  for (const size of SIZES) {
    progress(`${size} chunks: bulk load, index build, queries`);
    const database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
    try {
      await runMigrations(database);
      const store = createRagStore({ db: database.db, embedder });
      ingestRows.push(await bulkLoad(database.db, embedder, size));
      const t0 = performance.now();
      await store.retrieve({ scenarioId: 'trial-a', query: 'warm-up', collection: COLLECTION });
      const buildS = (performance.now() - t0) / 1000;
      ingestRows.push({ stage: `HNSW build on first use (m=16, ef_construction=64) + ANALYZE`, chunks: size, seconds: buildS, 'chunks/s': size / buildS });
      for (const scenario of [SCENARIOS[0]!, SCENARIOS[2]!]) searchRows.push(await measureSearch(database, store, embedder, size, scenario));
    } finally {
      await database.close();
    }
  }
  printTable('RAG ingest (local embedder, 256-d, in-memory PGlite)', ingestRows);
  printTable(`RAG retrieve (topK=${TOP_K}; latency over ${LATENCY_QUERIES} queries, recall@k vs exact scan over ${RECALL_QUERIES}, ties counted as hits)`, searchRows);
}

async function measureChunkAndEmbed(embedder: Embedder): Promise<Record<string, string | number>> {
  const corpus = new Corpus(1);
  const documents = Array.from({ length: 100 }, () => corpus.document());
  const t0 = performance.now();
  let chunks = 0;
  for (const text of documents) {
    const pieces = chunkText(text);
    chunks += pieces.length;
    await embedder.embed(pieces.map((piece) => piece.content));
  }
  const seconds = (performance.now() - t0) / 1000;
  return { stage: 'chunkText + local embed', chunks, seconds, 'chunks/s': chunks / seconds };
}

async function measureEndToEndIngest(embedder: Embedder): Promise<Record<string, string | number>> {
  const database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  try {
    await runMigrations(database);
    const store = createRagStore({ db: database.db, embedder });
    const corpus = new Corpus(2);
    let chunks = 0;
    const t0 = performance.now();
    for (let i = 0; chunks < E2E_CHUNKS; i++) {
      const result = await store.ingestDocument({ scenarioId: 'trial-a', sourceFile: `protocol-${i}.md`, text: corpus.document(), collection: COLLECTION });
      chunks += result.chunks;
    }
    const seconds = (performance.now() - t0) / 1000;
    return { stage: 'ingestDocument end to end (chunk, embed, one tx, HNSW kept current)', chunks, seconds, 'chunks/s': chunks / seconds };
  } finally {
    await database.close();
  }
}

/** Documents of ~50 chunks each, chunked and embedded here, written with the store's batched INSERT before the index exists. */
async function bulkLoad(db: Db, embedder: Embedder, size: number): Promise<Record<string, string | number>> {
  const corpus = new Corpus(3);
  const t0 = performance.now();
  await q.insertCollection(db, { name: COLLECTION, embeddingModel: embedder.model, dimension: embedder.dimension });
  let pending: q.ChunkRow[] = [];
  let loaded = 0;
  for (let doc = 0; loaded < size; doc++) {
    const scenarioId = pickScenario(loaded / size);
    const documentId = `${scenarioId}-doc-${doc}`;
    const chunks = chunkText(corpus.document()).slice(0, size - loaded);
    const vectors = await embedder.embed(chunks.map((chunk) => chunk.content));
    await q.upsertDocument(db, { id: documentId, scenarioId, collection: COLLECTION, sourceFile: `${documentId}.pdf`, contentHash: String(doc), chunkCount: chunks.length });
    chunks.forEach((chunk, i) => pending.push({ documentId, chunkIndex: chunk.index, scenarioId, collection: COLLECTION, content: chunk.content, start: chunk.start, end: chunk.end, embedding: vectors[i]! }));
    loaded += chunks.length;
    if (pending.length >= 5000 || loaded >= size) {
      await q.insertChunkRows(db, pending);
      pending = [];
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  return { stage: 'bulk load: chunk + embed + batched INSERT (no index yet)', chunks: loaded, seconds, 'chunks/s': loaded / seconds };
}

/** Interleaves scenarios across the load, in proportion to their shares. */
function pickScenario(fraction: number): string {
  const slot = (fraction * 97) % 1;
  let cumulative = 0;
  for (const scenario of SCENARIOS) {
    cumulative += scenario.share;
    if (slot < cumulative) return scenario.id;
  }
  return SCENARIOS[0]!.id;
}

async function measureSearch(database: Database, store: RagStore, embedder: Embedder, size: number, scenario: { id: string; share: number }): Promise<Record<string, string | number>> {
  const corpus = new Corpus(4);
  const questions = Array.from({ length: LATENCY_QUERIES + 10 }, () => corpus.question());
  const samples: number[] = [];
  for (const [i, query] of questions.entries()) {
    const t0 = performance.now();
    await store.retrieve({ scenarioId: scenario.id, query, collection: COLLECTION, topK: TOP_K });
    if (i >= 10) samples.push(performance.now() - t0); // the first queries warm the JIT and PGlite's caches
  }
  let recallSum = 0;
  const exactSamples: number[] = [];
  for (const query of questions.slice(0, RECALL_QUERIES)) {
    const found = await store.retrieve({ scenarioId: scenario.id, query, collection: COLLECTION, topK: TOP_K });
    const [vector] = await embedder.embed([query]);
    const t0 = performance.now();
    const exact = await nearest(database.db, { scenarioId: scenario.id, vector: vector!, exact: true });
    exactSamples.push(performance.now() - t0);
    // Template text has many chunks at exactly the same distance; any of them is a correct k-th neighbour,
    // so a hit is a result no farther than the exact k-th distance, not one with the same id.
    const kthDistance = Number(exact.at(-1)?.distance ?? Infinity);
    recallSum += found.filter((chunk) => 1 - chunk.score <= kthDistance + 1e-6).length / Math.max(1, exact.length);
  }
  const { p50, p99 } = summarise(samples);
  return { chunks: size, scope: `${scenario.id} (${Math.round(scenario.share * 100)}%)`, plan: await planOf(database.db, embedder, scenario.id), 'p50 ms': p50, 'p99 ms': p99, 'exact scan p50 ms': summarise(exactSamples).p50, [`recall@${TOP_K}`]: recallSum / RECALL_QUERIES };
}

async function nearest(db: Db, search: { scenarioId: string; vector: number[]; exact: boolean }): Promise<q.NearestChunkRow[]> {
  return withTransaction(db, async (tx) => {
    await q.setSearchParameters(tx, { efSearch: efSearchFor(TOP_K), iterativeScan: true, exact: search.exact });
    return q.selectNearestChunks(tx, { collection: COLLECTION, shape: vectorShape(search.vector.length), scenarioId: search.scenarioId, vector: search.vector, topK: TOP_K });
  });
}

async function planOf(db: Db, embedder: Embedder, scenarioId: string): Promise<string> {
  const [vector] = await embedder.embed(['肝功能异常 暂停给药']);
  const plan = await withTransaction(db, async (tx) => {
    await q.setSearchParameters(tx, { efSearch: efSearchFor(TOP_K), iterativeScan: true });
    const query = q.nearestChunksQuery({ collection: COLLECTION, shape: vectorShape(vector!.length), scenarioId, vector: vector!, topK: TOP_K });
    return (await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`)).map((row) => Object.values(row)[0]).join('\n');
  });
  if (plan.includes(collectionIndexName(COLLECTION, vector!.length))) return 'hnsw';
  if (plan.includes('rag_chunks_scope_idx')) return 'btree + exact sort';
  return 'seq scan';
}

/** Seeded generator of protocol-like text: Chinese and English sentences about visits, labs, AEs and dosing. */
class Corpus {
  private state: number;
  constructor(seed: number) {
    this.state = seed * 0x9e3779b9;
  }

  private random(): number {
    // mulberry32
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  sentence(): string {
    const p = <T>(items: readonly T[]) => this.pick(items);
    const templates = [
      () => `第${this.int(1, 12)}次访视时，研究者应记录受试者的${p(V.vitalZh)}；若${p(V.lab)}超过正常值上限${this.int(2, 5)}倍，应${p(V.actionZh)}。`,
      () => `受试者在${p(V.periodZh)}期间出现${p(V.aeZh)}，严重程度为${this.int(1, 4)}级，与${p(V.drug)}的关系判定为${p(V.relationZh)}。`,
      () => `${p(V.drug)}的推荐剂量为${this.int(1, 40) * 5} mg，每日${this.int(1, 3)}次，${p(V.routeZh)}给药，剂量调整见表${this.int(1, 20)}。`,
      () => `入组标准包括年龄${this.int(18, 30)}至${this.int(60, 80)}岁、${p(V.diseaseZh)}病程不少于${this.int(3, 24)}个月，并签署知情同意书。`,
      () => `排除标准：妊娠或哺乳期女性、${p(V.aeZh)}病史、近${this.int(1, 6)}个月内参加过其他临床试验者。`,
      () => `At visit ${this.int(1, 12)} the investigator records ${p(V.vitalEn)}; if ${p(V.lab)} exceeds ${this.int(2, 5)} x ULN, ${p(V.actionEn)}.`,
      () => `Any ${p(V.aeEn)} of grade ${this.int(3, 5)} is reported to the sponsor within ${p(['24', '48', '72'])} hours of awareness.`,
      () => `${p(V.drug)} is given at ${this.int(1, 40) * 5} mg ${p(V.freqEn)}; dose modifications follow Table ${this.int(1, 20)}.`,
      () => `The primary endpoint is the change in ${p(V.endpointEn)} from baseline to week ${this.int(4, 52)}.`,
      () => `主要终点为第${this.int(4, 52)}周${p(V.endpointZh)}相对基线的变化，关键次要终点为${p(V.endpointZh)}达标率。`,
    ];
    return this.pick(templates)();
  }

  document(): string {
    const paragraphs = Array.from({ length: this.int(60, 90) }, () => Array.from({ length: this.int(3, 8) }, () => this.sentence()).join(''));
    return paragraphs.map((paragraph, i) => `${i % 12 === 0 ? `## ${this.int(1, 15)}. ${this.pick(V.sectionZh)}\n\n` : ''}${paragraph}`).join('\n\n');
  }

  question(): string {
    const p = <T>(items: readonly T[]) => this.pick(items);
    return this.pick([
      () => `${p(V.lab)}超过正常值上限时应如何处理？`,
      () => `${p(V.aeZh)}需要在多长时间内上报？`,
      () => `${p(V.drug)}的剂量是多少？`,
      () => `What is the primary endpoint for ${p(V.endpointEn)}?`,
      () => `When must a grade 3 ${p(V.aeEn)} be reported?`,
      () => `入组标准中${p(V.diseaseZh)}病程要求是什么？`,
      () => `How is ${p(V.vitalEn)} recorded at each visit?`,
    ])();
  }
}

const V = {
  vitalZh: ['收缩压和舒张压', '心率', '体温', '体重', '呼吸频率', '十二导联心电图'],
  vitalEn: ['blood pressure', 'heart rate', 'body temperature', 'body weight', 'the 12-lead ECG'],
  lab: ['ALT', 'AST', '总胆红素', '肌酐', 'HbA1c', '中性粒细胞计数', 'eGFR'],
  actionZh: ['暂停给药并在72小时内复查', '永久停药并上报严重不良事件', '降低一个剂量水平', '增加访视频率至每周一次'],
  actionEn: ['pause dosing and repeat the test within 72 hours', 'stop the study drug permanently', 'reduce the dose by one level', 'add a weekly safety visit'],
  periodZh: ['筛选期', '导入期', '治疗期', '随访期'],
  aeZh: ['药物性肝损伤', '低血糖', '皮疹', '中性粒细胞减少', 'QT间期延长', '间质性肺炎'],
  aeEn: ['drug-induced liver injury', 'hypoglycaemia', 'rash', 'neutropenia', 'QT prolongation', 'pneumonitis'],
  relationZh: ['肯定有关', '很可能有关', '可能有关', '可能无关', '无关'],
  drug: ['CA-101', 'CA-205', 'metformin', 'placebo', 'dapagliflozin'],
  routeZh: ['口服', '静脉', '皮下'],
  freqEn: ['once daily', 'twice daily', 'every two weeks'],
  diseaseZh: ['二型糖尿病', '高血压', '慢性肾病', '类风湿关节炎'],
  endpointEn: ['HbA1c', 'fasting plasma glucose', 'systolic blood pressure', 'DAS28-CRP'],
  endpointZh: ['糖化血红蛋白', '空腹血糖', '收缩压', '疾病活动度评分'],
  sectionZh: ['研究设计', '入组与排除标准', '给药方案', '安全性评估', '统计分析', '访视安排'],
} as const;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
