// Every query command, by name and alias (case-insensitive). The planner, the validator and
// GET /api/v1/query/reference all read this one list, so the reference cannot drift.
import type { CommandDefinition } from './command.ts';
import analyzeFields from './analyze-fields.ts';
import avg from './avg.ts';
import barchart from './barchart.ts';
import bucket from './bucket.ts';
import caseCommand from './case.ts';
import chain from './chain.ts';
import cidr from './cidr.ts';
import comment from './comment.ts';
import count from './count.ts';
import dedup from './dedup.ts';
import frequency from './frequency.ts';
import graphWorld from './graph-world.ts';
import graph from './graph.ts';
import groupBy from './group-by.ts';
import head from './head.ts';
import headTail from './head-tail.ts';
import heatmap from './heatmap.ts';
import histogram from './histogram.ts';
import inCommand from './in.ts';
import join from './join.ts';
import iqr from './iqr.ts';
import kurtosis from './kurtosis.ts';
import limit from './limit.ts';
import madOutlier from './mad-outlier.ts';
import mad from './mad.ts';
import max from './max.ts';
import median from './median.ts';
import mesh from './mesh.ts';
import min from './min.ts';
import modifiedZScore from './modified-z-score.ts';
import multi from './multi.ts';
import percentile from './percentile.ts';
import piechart from './piechart.ts';
import regex from './regex.ts';
import replace from './replace.ts';
import concat from './concat.ts';
import lowercase from './lowercase.ts';
import match from './match.ts';
import uppercase from './uppercase.ts';
import len from './len.ts';
import logSize from './log-size.ts';
import levenshtein from './levenshtein.ts';
import base64Decode from './base64-decode.ts';
import split from './split.ts';
import substr from './substr.ts';
import urldecode from './urldecode.ts';
import coalesce from './coalesce.ts';
import sprintf from './sprintf.ts';
import evalCommand from './eval.ts';
import hash from './hash.ts';
import strftime from './strftime.ts';
import now from './now.ts';
import selectFirst from './select-first.ts';
import selectLast from './select-last.ts';
import singleval from './singleval.ts';
import skewness from './skewness.ts';
import sort from './sort.ts';
import stddev from './stddev.ts';
import sum from './sum.ts';
import table from './table.ts';
import tail from './tail.ts';
import timechart from './timechart.ts';
import top from './top.ts';

export const COMMANDS: CommandDefinition[] = [
  inCommand, cidr, comment,
  count, sum, avg, min, max, median, percentile, stddev, skewness, kurtosis, iqr, mad, multi, groupBy,
  selectFirst, selectLast, top, frequency, headTail, bucket, analyzeFields,
  caseCommand,
  regex,
  replace, concat, lowercase, uppercase, len, logSize, levenshtein, base64Decode, split, substr, urldecode, coalesce, sprintf,
  evalCommand, hash, strftime, now,
  table, sort, limit, head, tail, dedup,
  timechart,
  piechart, barchart, singleval, histogram, heatmap, graph, mesh, graphWorld,
  modifiedZScore, madOutlier,
  join, chain,
  match,
];

const byName = new Map<string, CommandDefinition>();
for (const c of COMMANDS) {
  for (const n of [c.name, ...(c.aliases ?? [])]) byName.set(n.toLowerCase(), c);
}

export function findCommand(name: string): CommandDefinition | undefined {
  return byName.get(name.toLowerCase());
}
