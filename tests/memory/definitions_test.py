"""The definition an edited line is in, for every language with a table
(and the generic rule for the rest): real snippets, the line, the name."""
from __future__ import annotations

import pytest

from agitmem.memory import definitions
from agitmem.porcelain import observed

# (extension, source, 1-based line inside it, the enclosing definition)
SNIPPETS = (
    ('erl', 'handle_call({get, Key}, _From, S = #state{entries = E}) ->\n    case maps:find(Key, E) of\n        error -> {reply, not_found, S}\n    end.\n', 3, 'handle_call'),
    ('erl', "init(TtlMs) ->\n    erlang:send_after(?SWEEP_MS, self(), sweep),\n    {ok, #state{ttl_ms = TtlMs}}.\n", 2, 'init'),
    ('erl', '-record(state, {ttl_ms,\n                entries = #{}}).\n', 2, 'state'),
    ('ex', 'defmodule Accounts.User do\n  def changeset(user, attrs) do\n    user\n    |> cast(attrs, [:email])\n  end\nend\n', 4, 'changeset'),
    ('exs', 'defmodule AppTest do\n  defp build(attrs \\\\ %{}) do\n    attrs\n  end\nend\n', 3, 'build'),
    ('ex', 'defmodule Accounts.User do\n  @moduledoc false\nend\n', 2, 'Accounts.User'),
    ('cs', 'namespace Shop.Orders\n{\n    public sealed class OrderService\n    {\n        public async Task<Order> PlaceAsync(Cart cart, CancellationToken ct)\n        {\n            var order = new Order(cart);\n            return order;\n        }\n    }\n}\n', 7, 'PlaceAsync'),
    ('cs', 'class Repo\n{\n    private static decimal Total(IEnumerable<Line> lines)\n    {\n        return lines.Sum(l => l.Price);\n    }\n}\n', 5, 'Total'),
    ('cs', 'public class Cart\n{\n    public int Count\n    {\n        get { return items.Count; }\n    }\n}\n', 5, 'Count'),
    ('swift', 'final class NotesViewModel: ObservableObject {\n    @MainActor func onQueryChanged(_ q: String) {\n        query = q\n    }\n}\n', 3, 'onQueryChanged'),
    ('swift', 'extension ImageCache {\n    public static func image(for url: URL) -> UIImage? {\n        return store[url]\n    }\n}\n', 3, 'image'),
    ('swift', 'struct Point {\n    init(x: Int) {\n        self.x = x\n    }\n}\n', 3, 'init'),
    ('java', 'public class App {\n    @Override\n    public String toString() {\n        return "";\n    }\n}\n', 4, 'toString'),
    ('kt', 'class Repo {\n    override suspend fun load(id: Long): Note {\n        return dao.get(id)\n    }\n}\n', 3, 'load'),
    ('scala', 'object Billing {\n  def total(lines: Seq[Line]): BigDecimal = {\n    lines.map(_.price).sum\n  }\n}\n', 3, 'total'),
    ('dart', 'class Cart {\n  Future<void> checkout(String id) async {\n    await api.post(id);\n  }\n}\n', 3, 'checkout'),
    ('fs', 'module Billing\n\nlet total (lines: Line list) =\n    lines |> List.sumBy (fun l -> l.Price)\n', 4, 'total'),
    ('hs', 'module Parse where\n\nparseRange :: String -> Maybe Range\nparseRange s =\n  case splitOn "-" s of\n    _ -> Nothing\n', 5, 'parseRange'),
    ('ml', 'let rec parse_range s =\n  match String.split_on_char \'-\' s with\n  | _ -> None\n', 2, 'parse_range'),
    ('lua', 'local M = {}\n\nfunction M.parse(s)\n  return tonumber(s)\nend\n', 4, 'M.parse'),
    ('nim', 'proc parseRange*(s: string): Range =\n  result = Range()\n', 2, 'parseRange'),
    ('cr', 'class Cache\n  def fetch(key : String)\n    @store[key]?\n  end\nend\n', 3, 'fetch'),
    ('elm', 'update : Msg -> Model -> Model\nupdate msg model =\n    case msg of\n        Reset -> init\n', 3, 'update'),
    ('rkt', '(define (parse-range s)\n  (string-split s "-"))\n', 2, 'parse-range'),
    ('clj', '(ns app.core)\n\n(defn parse-range [s]\n  (str/split s #"-"))\n', 4, 'parse-range'),
    ('pl', 'package Shop::Cart;\n\nsub total {\n    my ($self) = @_;\n    return 0;\n}\n', 4, 'total'),
    ('groovy', 'class Build {\n    def configure(project) {\n        project.version = "1"\n    }\n}\n', 3, 'configure'),
    ('m', 'function [r, c] = grid_size(m)\n    r = size(m, 1);\n    c = size(m, 2);\nend\n', 2, 'grid_size'),
    ('f90', 'module geometry\ncontains\n  pure real function area(r)\n    real, intent(in) :: r\n    area = 3.14159 * r * r\n  end function area\nend module geometry\n', 5, 'area'),
    ('cbl', '       PROCEDURE DIVISION.\n       MAIN-PARA.\n           PERFORM CALC-TOTAL\n           GOBACK.\n       CALC-TOTAL.\n           ADD WS-PRICE TO WS-TOTAL.\n', 6, 'CALC-TOTAL'),
    ('v', 'module counter #(parameter W = 8) (\n  input clk,\n  output reg [W-1:0] q\n);\n  always @(posedge clk) q <= q + 1;\nendmodule\n', 5, 'counter'),
    ('sql', 'CREATE OR REPLACE FUNCTION billing.invoice_total(inv_id bigint)\nRETURNS numeric AS $$\n  SELECT sum(amount) FROM lines WHERE invoice_id = inv_id;\n$$ LANGUAGE sql;\n', 3, 'billing.invoice_total'),
    ('tf', 'resource "aws_s3_bucket" "logs" {\n  bucket = "acme-logs"\n  force_destroy = true\n}\n', 3, 'aws_s3_bucket.logs'),
    ('tf', 'variable "region" {\n  default = "eu-west-1"\n}\n', 2, 'region'),
    ('proto', 'service Billing {\n  rpc Charge(ChargeRequest) returns (ChargeReply);\n}\n\nmessage ChargeRequest {\n  string id = 1;\n}\n', 6, 'ChargeRequest'),
    ('graphql', 'type Query {\n  invoice(id: ID!): Invoice\n}\n', 2, 'Query'),
    ('sh', 'set -eu\n\ndeploy() {\n  rsync -a dist/ host:/srv\n}\n', 4, 'deploy'),
    ('bash', 'function cleanup {\n  rm -rf "$tmp"\n}\n', 2, 'cleanup'),
    ('ps1', 'function Get-StaleBranch {\n    param([int]$Days)\n    git branch\n}\n', 3, 'Get-StaleBranch'),
    ('php', 'final class Cart\n{\n    public static function total(array $lines): int\n    {\n        return 0;\n    }\n}\n', 5, 'total'),
    ('R', 'tidy_sales <- function(df) {\n  df[df$amount > 0, ]\n}\n', 2, 'tidy_sales'),
    ('jl', 'function area(r)\n    pi * r^2\nend\n', 2, 'area'),
    ('zig', 'pub fn parse(s: []const u8) !u32 {\n    return std.fmt.parseInt(u32, s, 10);\n}\n', 2, 'parse'),
    ('gleam', 'pub fn parse(s: String) -> Int {\n  0\n}\n', 2, 'parse'),
    # a language with no table: the generic keyword-led rule
    ('mojo', 'fn add(a: Int, b: Int) -> Int:\n    return a + b\n', 2, 'add'),
    ('vala', 'public class Cart {\n    int total;\n}\n', 2, 'Cart'),
    # data and prose define nothing
    ('md', '## Notes\nclass Foo is described here\n', 2, None),
    ('yaml', 'jobs:\n  test:\n    runs-on: ubuntu\n', 3, None),
)


@pytest.mark.parametrize(('ext', 'text', 'line', 'symbol'), SNIPPETS)
def test_the_definition_an_edited_line_is_in(ext: str, text: str, line: int, symbol: str | None) -> None:
    assert observed.enclosing(text.splitlines(), line, ext) == symbol


@pytest.mark.parametrize('line', (
    '    if (count > 0) {', '    return Total(lines);', '        var order = new Order(cart);',
    '    foreach (var l in lines)', '           GOBACK.', '    Console.WriteLine(total);', '  } else if (x) {',
))
def test_statements_open_no_definition(line: str) -> None:
    for ext in ('cs', 'java', 'swift', 'dart', 'cbl', 'c'):
        assert definitions.opens(line, ext) is None, (ext, line)


def test_clauses_and_overloads_are_not_a_definition_written_twice() -> None:
    erl = ['handle_call({put, K}, _F, S) ->', '    ok;', 'handle_call({get, K}, _F, S) ->', '    ok.']
    assert not observed.twice(erl, 'handle_call', 'erl')
    assert observed.twice([*erl, erl[2], '    ok.'], 'handle_call', 'erl')
    cs = ['    public int Add(int a) {', '    }', '    public int Add(int a, int b) {', '    }']
    assert not observed.twice(cs, 'Add', 'cs')
    assert observed.twice(['def load(p):', '    pass', 'def load(q):', '    pass'], 'load', 'py')
