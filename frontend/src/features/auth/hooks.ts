import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { authKeys, authQueries, signIn, signOut } from "./api";

export function useMe() {
  return useQuery(authQueries.me());
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
