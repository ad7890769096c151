// The frontend's lint: the layout rules of frontend/README.md ("Data"), checked.
// Data is fetched in a resource's api.ts and cached by its hooks.ts, under the keys of
// its key factory (in api.ts); pages and components only call hooks. No type-aware
// rules: the lint must stay fast (tsc checks the types).
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

const QUERY_HOOKS = ["useQuery", "useQueries", "useMutation", "useInfiniteQuery", "useSuspenseQuery", "useQueryClient"];
const CACHE_METHODS =
  "^(getQueryData|setQueryData|getQueryState|getQueriesData|setQueriesData|invalidateQueries|refetchQueries|removeQueries|resetQueries|cancelQueries|prefetchQuery|fetchQuery|ensureQueryData)$";

/** Where data may be fetched: the typed client and each resource's api.ts. */
const API_MODULES = ["src/api/**", "src/features/*/api.ts"];
/** Where queries and mutations may be declared: each resource's hooks.ts. */
const HOOK_MODULES = ["src/features/*/hooks.ts"];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/api/schema.d.ts"] },
  {
    files: ["src/**/*.{ts,tsx}"],
    languageOptions: { parser: tseslint.parser },
    plugins: { "react-hooks": reactHooks, "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "warn",
      "no-restricted-syntax": [
        "error",
        ...[
          "Property[key.name='queryKey'] > ArrayExpression",
          "Property[key.name='queryKey'] > TSAsExpression > ArrayExpression",
          `CallExpression[callee.property.name=/${CACHE_METHODS}/][arguments.0.type='ArrayExpression']`,
          `CallExpression[callee.property.name=/${CACHE_METHODS}/][arguments.0.expression.type='ArrayExpression']`,
        ].map((selector) => ({
          selector,
          message: "A query key comes from its resource's key factory (features/<resource>/api.ts), never a literal array.",
        })),
      ],
    },
  },
  {
    files: ["src/**/*.{ts,tsx}"],
    ignores: HOOK_MODULES,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "@tanstack/react-query",
              importNames: QUERY_HOOKS,
              message: "Queries, mutations and cache updates live in a resource's hooks.ts (features/<resource>/hooks.ts); call its hooks.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/**/*.{ts,tsx}"],
    ignores: API_MODULES,
    rules: {
      "no-restricted-globals": ["error", { name: "fetch", message: "Requests go through the typed client in a resource's api.ts." }],
      "no-restricted-properties": [
        "error",
        { object: "globalThis", property: "fetch", message: "Requests go through the typed client in a resource's api.ts." },
        { object: "window", property: "fetch", message: "Requests go through the typed client in a resource's api.ts." },
      ],
    },
  },
);
