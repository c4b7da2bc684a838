// Reading the tables and headings of the Markdown documents that tests hold to the code.

/** Cells of every table row in `text`, trimmed, without the |---| separator rows. */
export function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replaceAll('\\|', '|')),
    );
}

/** The text between `<!-- name:start -->` and `<!-- name:end -->`, or undefined without both. */
export function markedSection(text: string, name: string): string | undefined {
  const start = text.indexOf(`<!-- ${name}:start -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  return start === -1 || end < start ? undefined : text.slice(start, end);
}

/** The link anchors GitHub gives the document's headings (`### Quota exhausted` -> `quota-exhausted`). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading = ''] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    anchors.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replaceAll(' ', '-'),
    );
  }
  return anchors;
}
