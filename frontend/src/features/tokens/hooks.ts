import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { createToken, fetchTokens, revokeToken, tokenKeys } from "./api";

export function useTokens() {
  return useQuery({ queryKey: tokenKeys.all, queryFn: ({ signal }) => fetchTokens(signal) });
}

export function useCreateToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.all }),
  });
}

export function useRevokeToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.all }),
  });
}
