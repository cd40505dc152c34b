import './style.css';
import { api } from './api';
import { startApp } from './app';

startApp(document.querySelector<HTMLElement>('#app')!, api);
