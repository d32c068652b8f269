// Text into HTML. Everything a model or a tool wrote (answers, decision summaries, observations)
// goes through here before it reaches report.html, so a model's "<script>" stays text.
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
