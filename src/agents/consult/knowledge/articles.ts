import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { scenarioDocumentId } from '../../../runtime/scenarios/ingest-documents.js';
import { ClinAgentError } from '../../../core/errors.js';
import { packageRoot } from '../../../core/paths.js';
import { extractText } from '../../../rag/index.js';

/**
 * The consult's knowledge bases, one per specialty, each its own RAG scope and collection. Only dermatology is
 * shipped (seed 003); another specialty is a folder of articles and one entry here.
 */
export const KNOWLEDGE_BASES = {
  dermatology: { scope: 'consult-dermatology', collection: 'consult-dermatology', folder: ['data', 'consult', 'knowledge'] },
} as const;

export type Specialty = keyof typeof KNOWLEDGE_BASES;

/** What a model may write for a specialty, in English or Chinese, lower-cased. */
const SPECIALTY_NAMES: Record<string, Specialty> = { dermatology: 'dermatology', derm: 'dermatology', skin: 'dermatology', 皮肤科: 'dermatology', 皮肤: 'dermatology' };

export function resolveSpecialty(name: string): Specialty | undefined {
  return SPECIALTY_NAMES[name.trim().toLowerCase()];
}

export function knowledgeFolder(specialty: Specialty): string {
  return path.join(packageRoot(), ...KNOWLEDGE_BASES[specialty].folder);
}

/** One shipped article: what a passage from it is cited by, and the sections that are ingested as passages. */
export interface KnowledgeArticle {
  sourceFile: string;
  /** The `# ` heading, English with the Chinese name. */
  title: string;
  /** The `Source:` line without its label: where the facts come from. */
  source: string;
  sections: KnowledgeSection[];
}

export interface KnowledgeSection {
  documentId: string;
  /** The article's title, then the section: a passage retrieved alone still says which condition it is about. */
  text: string;
}

/**
 * Every `.md` article in `folder`, in file-name order. An article without a title or a Source line is refused
 * by name: a passage the consult cannot attribute must not reach a patient.
 *
 * Each `## ` section becomes its own RAG document headed by the article's title (the opening paragraph, with the
 * Chinese summary, is the first). Articles are ~2,000 characters, which the store would cut into two or three
 * chunks of which only the first names the condition; with the offline embedder a chunk about "red flags" that
 * does not say "tinea" is found by neither "ringworm" nor "体癣".
 */
export async function loadKnowledgeArticles(specialty: Specialty, folder = knowledgeFolder(specialty)): Promise<KnowledgeArticle[]> {
  const files = (await readdir(folder)).filter((file) => file.endsWith('.md')).sort();
  if (files.length === 0) {
    throw new ClinAgentError('CONFIG_INVALID', `The ${specialty} knowledge base in ${folder} has no .md articles. Restore the shipped data/consult/knowledge folder (reinstall ClinAgent).`, { folder });
  }
  const articles: KnowledgeArticle[] = [];
  for (const sourceFile of files) {
    const text = await extractText(sourceFile, new Uint8Array(await readFile(path.join(folder, sourceFile))));
    const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim();
    const source = /^Source:\s*(.+)$/m.exec(text)?.[1]?.trim();
    if (!title || !source) {
      throw new ClinAgentError('CONFIG_INVALID', `Knowledge article ${path.join(folder, sourceFile)} has no ${title ? '"Source: ..." line' : '"# Title" heading'}. Every article needs a title and a Source line naming where its facts come from.`, {
        file: sourceFile,
      });
    }
    const articleId = scenarioDocumentId(KNOWLEDGE_BASES[specialty].scope, sourceFile);
    const body = text.replace(/^Source:.*$/m, '').replace(/^#\s+.+$/m, '');
    const sections = body
      .split(/^(?=## )/m)
      .map((section) => section.trim())
      .filter((section) => section !== '')
      .map((section, i) => ({ documentId: `${articleId}:${i}`, text: `# ${title}\n\n${section}` }));
    articles.push({ sourceFile, title, source, sections });
  }
  return articles;
}
