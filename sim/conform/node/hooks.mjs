// A module.register load hook: appends an export for named functions that a chunk defines but
// does not export (OpenClaw's internal helpers), under the alias `__handoff_<name>`.
let appendByUrl = {};

export async function initialize(data) {
  appendByUrl = data.appendByUrl || {};
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const names = appendByUrl[url];
  if (!names || names.length === 0) return result;
  const source = typeof result.source === "string"
    ? result.source : Buffer.from(result.source).toString("utf8");
  const extra = names.map((name) => `${name} as __handoff_${name}`).join(", ");
  return { ...result, source: `${source}\nexport { ${extra} };\n` };
}
