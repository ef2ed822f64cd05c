// scripts/build-main.mjs bundles `.env` files as their text (bundled-config/service.env).
declare module '*.env' {
  const text: string;
  export default text;
}
