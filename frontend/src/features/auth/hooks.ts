import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { authKeys, fetchMe, signIn, signOut } from "./api";

export function useMe() {
  return useQuery({ queryKey: authKeys.me, queryFn: ({ signal }) => fetchMe(signal), staleTime: 60_000, retry: false });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ username, password }: { username: string; password: string }) => signIn(username, password),
    onSuccess: (user) => {
      // A new session: nothing cached for the previous one may leak into it.
      queryClient.clear();
      queryClient.setQueryData(authKeys.me, user);
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signOut,
    onSuccess: () => {
      queryClient.clear();
      queryClient.setQueryData(authKeys.me, null);
    },
  });
}
